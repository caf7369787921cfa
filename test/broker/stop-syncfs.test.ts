/**
 * The broker's stop makes every log durable with one syncfs (`sync -f`, stop-sync.ts), and records
 * the clean stop only when that syncfs succeeded. The broker runs in a child process whose PATH
 * holds a `sync` of the test's own, which logs its calls and fails when told to; without any
 * `sync` each log fsyncs its own files.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Broker } from "../../src/broker/broker.js";
import { CLEAN_STOP_FILE, decodeCleanStop } from "../../src/broker/clean-stop.js";
import { fetchValues, tempDataDir } from "./helpers.js";

const PARTITIONS = 4;

/**
 * A directory of the test's own for PATH, holding a `sync` that appends its arguments to the file
 * `calls` and exits with 1 from call `failFrom` on (else runs the real one); with `failFrom` null
 * it holds no `sync`, and PATH is that directory alone (`sh` and `sync` are then not found).
 */
async function fakeSync(t: TestContext, failFrom: number | null): Promise<{ calls: string; path: string }> {
  const bin = await mkdtemp(join(tmpdir(), "conch-sync-"));
  t.after(() => rm(bin, { recursive: true, force: true }));
  const calls = join(bin, "calls");
  await writeFile(calls, "");
  if (failFrom === null) return { calls, path: bin };
  const script = [
    "#!/bin/sh",
    `echo "$*" >> '${calls}'`,
    `n=$(wc -l < '${calls}')`,
    `if [ "$n" -ge ${failFrom} ]; then echo "sync: error syncing: Input/output error" >&2; exit 1; fi`,
    'exec /bin/sync "$@"',
  ].join("\n");
  await writeFile(join(bin, "sync"), `${script}\n`);
  await chmod(join(bin, "sync"), 0o755);
  return { calls, path: `${bin}:${process.env.PATH}` };
}

/** Runs fixtures/fill-and-stop.js with PATH `path`: a broker on `dataDir` written to and stopped. */
async function fillAndStop(dataDir: string, path: string): Promise<void> {
  const script = fileURLToPath(new URL("./fixtures/fill-and-stop.js", import.meta.url));
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [script, dataDir], {
      env: { ...process.env, PATH: path },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.once("exit", (c) => resolve({ code: c, stderr: err }));
  });
  assert.equal(code, 0, stderr);
}

async function manifest(dataDir: string): Promise<Map<string, unknown> | null> {
  return decodeCleanStop(await readFile(join(dataDir, CLEAN_STOP_FILE)).catch(() => Buffer.alloc(0)));
}

async function checkData(dataDir: string): Promise<void> {
  const broker = await Broker.open({ dataDir });
  try {
    for (let p = 0; p < PARTITIONS; p++)
      assert.deepEqual(await fetchValues(broker, "t", p), [`a${p}`, `b${p}`]);
  } finally {
    await broker.close();
  }
}

test("a stop runs syncfs on the data directory's file system, then records itself", async (t) => {
  const dataDir = await tempDataDir(t);
  const { calls, path } = await fakeSync(t, 1_000_000);
  await fillAndStop(dataDir, path);
  const lines = (await readFile(calls, "utf8")).trim().split("\n");
  assert.equal(lines.length, 2, `the probe and the stop's syncfs: ${lines.join(" | ")}`);
  assert.equal(lines[0], `-f -- ${dataDir}`);
  assert.ok(lines[1]!.startsWith(`-f -- ${dataDir}`), lines[1]);
  assert.equal((await manifest(dataDir))?.get("t") !== undefined, true, "the clean stop recorded");
  await checkData(dataDir);
});

test("a failed syncfs at stop records no clean stop, and the next start recovers every log", async (t) => {
  const dataDir = await tempDataDir(t);
  const { calls, path } = await fakeSync(t, 2);
  await fillAndStop(dataDir, path);
  assert.equal((await readFile(calls, "utf8")).trim().split("\n").length, 2);
  assert.equal((await manifest(dataDir))?.get("t"), undefined, "no clean stop recorded for the topic");
  await checkData(dataDir);
});

test("without a sync command each log fsyncs its own files, and the stop is recorded", async (t) => {
  const dataDir = await tempDataDir(t);
  const { path } = await fakeSync(t, null);
  await fillAndStop(dataDir, path);
  assert.equal((await manifest(dataDir))?.get("t") !== undefined, true, "the clean stop recorded");
  await checkData(dataDir);
});

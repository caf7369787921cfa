/**
 * The broker's stop makes every log durable with one syncfs (`sync -f`, stop-sync.ts), and records
 * the clean stop only when that syncfs succeeded. A `sync` of the test's own on PATH logs its
 * calls and fails when told to; without any `sync` each log fsyncs its own files.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { CLEAN_STOP_FILE, decodeCleanStop } from "../../src/broker/clean-stop.js";
import { batchOf, fetchValues, tempDataDir } from "./helpers.js";

const PARTITIONS = 4;

/**
 * Puts a directory of its own first on PATH until `restore`, holding a `sync` that appends its
 * arguments to the file `calls` and exits with 1 from call `failFrom` on (else runs the real one);
 * with `failFrom` null, PATH holds only that directory and no `sync` is found at all.
 */
async function fakeSync(
  t: TestContext,
  failFrom: number | null,
): Promise<{ calls: string; restore: () => void }> {
  const bin = await mkdtemp(join(tmpdir(), "conch-sync-"));
  const calls = join(bin, "calls");
  await writeFile(calls, "");
  const path = process.env.PATH;
  const restore = () => {
    process.env.PATH = path;
  };
  t.after(async () => {
    restore();
    await rm(bin, { recursive: true, force: true });
  });
  if (failFrom === null) {
    process.env.PATH = bin;
    return { calls, restore };
  }
  const script = [
    "#!/bin/sh",
    `echo "$*" >> '${calls}'`,
    `n=$(wc -l < '${calls}')`,
    `if [ "$n" -ge ${failFrom} ]; then echo "sync: error syncing: Input/output error" >&2; exit 1; fi`,
    'exec /bin/sync "$@"',
  ].join("\n");
  await writeFile(join(bin, "sync"), `${script}\n`);
  await chmod(join(bin, "sync"), 0o755);
  process.env.PATH = `${bin}:${path}`;
  return { calls, restore };
}

async function fill(dataDir: string): Promise<Broker> {
  const broker = await Broker.open({ dataDir, segmentBytes: 64 * 1024 });
  await broker.createTopic("t", PARTITIONS);
  for (let p = 0; p < PARTITIONS; p++) await broker.produce("t", p, batchOf([`a${p}`, `b${p}`]), "leader");
  return broker;
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
  const broker = await fill(dataDir);
  const { calls } = await fakeSync(t, 1_000_000);
  await broker.close();
  const lines = (await readFile(calls, "utf8")).trim().split("\n");
  assert.equal(lines.length, 2, `the probe and the stop's syncfs: ${lines.join(" | ")}`);
  assert.equal(lines[0], `-f -- ${dataDir}`);
  assert.ok(lines[1]!.startsWith(`-f -- ${dataDir}`), lines[1]);
  assert.equal((await manifest(dataDir))?.get("t") !== undefined, true, "the clean stop recorded");
  await checkData(dataDir);
});

test("a failed syncfs at stop records no clean stop, and the next start recovers every log", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await fill(dataDir);
  const { calls } = await fakeSync(t, 2);
  await broker.close();
  assert.equal((await readFile(calls, "utf8")).trim().split("\n").length, 2);
  assert.equal((await manifest(dataDir))?.get("t"), undefined, "no clean stop recorded for the topic");
  await checkData(dataDir);
});

test("without a sync command each log fsyncs its own files, and the stop is recorded", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await fill(dataDir);
  const { restore } = await fakeSync(t, null);
  await broker.close();
  restore();
  assert.equal((await manifest(dataDir))?.get("t") !== undefined, true, "the clean stop recorded");
  await checkData(dataDir);
});

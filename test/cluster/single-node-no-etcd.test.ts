import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const CONCH = new URL("../../../bin/conch.js", import.meta.url).pathname;

/**
 * Runs `conch broker` with a module hook that makes `etcd3` impossible to load, until it logs that
 * it listens (resolves "listening") or exits (resolves its output).
 */
async function brokerWithoutEtcd3(dir: string, extra: string[]): Promise<string> {
  await writeFile(
    join(dir, "hooks.mjs"),
    `export async function resolve(specifier, context, next) {
      if (specifier === "etcd3") throw new Error("etcd3 is blocked by the test");
      return next(specifier, context);
    }\n`,
  );
  await writeFile(
    join(dir, "block.mjs"),
    `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`,
  );
  const child = spawn(
    process.execPath,
    [
      "--import",
      join(dir, "block.mjs"),
      CONCH,
      "broker",
      "--data-dir",
      join(dir, "data"),
      "--port",
      "0",
      "--kafka-port",
      "0",
      "--no-http",
      "--log-format",
      "json",
      ...extra,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  return new Promise((resolve) => {
    const seen = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes("conch broker listening")) {
        child.kill("SIGKILL");
        resolve("listening");
      }
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    child.once("exit", () => resolve(output));
  });
}

test("a single-node broker starts without ever loading the etcd client; cluster mode is what loads it", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "conch-no-etcd-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal(await brokerWithoutEtcd3(dir, []), "listening");
  // The same hook does stop a broker that needs etcd3: so the first start proves it never asked.
  const clustered = await brokerWithoutEtcd3(dir, ["--broker-id", "1", "--etcd", "127.0.0.1:1"]);
  assert.match(clustered, /cluster mode needs the optional package etcd3/);
});

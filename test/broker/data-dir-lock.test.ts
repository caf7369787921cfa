import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { LOCK_FILE } from "../../src/broker/data-dir-lock.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "conch-lock-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A pid that belonged to a process which has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid;
  await new Promise((resolve) => child.once("exit", resolve));
  assert.ok(pid !== undefined);
  return pid;
}

test("a second broker on the same data directory is refused while the first is open", async () => {
  await withDir(async (dir) => {
    const first = await Broker.open({ dataDir: dir });
    assert.equal((await readFile(join(dir, LOCK_FILE), "utf8")).trim(), String(process.pid));
    await assert.rejects(
      Broker.open({ dataDir: dir }),
      (err: unknown) =>
        err instanceof ConchError &&
        err.code === ErrorCode.STORAGE_ERROR &&
        err.message.includes(`in use by process ${process.pid}`),
    );
    await first.createTopic("still_mine", 1);
    await first.close();
    // Closed: the lock is gone and the next broker opens with the data.
    const second = await Broker.open({ dataDir: dir });
    assert.ok(second.describeTopic("still_mine"));
    await second.close();
  });
});

test("a lock left by a process that no longer exists is taken over", async () => {
  await withDir(async (dir) => {
    await writeFile(join(dir, LOCK_FILE), `${await deadPid()}\n`);
    const broker = await Broker.open({ dataDir: dir });
    assert.equal((await readFile(join(dir, LOCK_FILE), "utf8")).trim(), String(process.pid));
    await broker.close();
  });
});

test("a lock file that holds no pid is treated as stale", async () => {
  await withDir(async (dir) => {
    await writeFile(join(dir, LOCK_FILE), "not a pid");
    const broker = await Broker.open({ dataDir: dir });
    await broker.close();
  });
});

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { BOOT_FILE, DataDirLock, LOCK_FILE } from "../../src/broker/data-dir-lock.js";
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

test("a stale lock with this boot's id in conch.boot is a crash of the process alone; any other is not", async () => {
  await withDir(async (dir) => {
    const boot = (await readFile("/proc/sys/kernel/random/boot_id", "utf8").catch(() => "")).trim();
    if (boot === "") return; // Not Linux: no boot id, every crash is taken for the machine's.
    const broker = await Broker.open({ dataDir: dir });
    // Written once the open is done; a clean close leaves it but removes the lock.
    assert.equal((await readFile(join(dir, BOOT_FILE), "utf8")).trim(), boot);
    await broker.close();
    let lock = await DataDirLock.acquire(dir);
    assert.equal(lock.crashedThisBoot, false, "no stale lock: a clean stop");
    await lock.release();

    // A broker of this boot that died (its lock left behind, the boot file written).
    await writeFile(join(dir, LOCK_FILE), `${await deadPid()}\n`);
    await writeFile(join(dir, BOOT_FILE), `${boot}\n`);
    lock = await DataDirLock.acquire(dir);
    assert.equal(lock.crashedThisBoot, true);
    // Taken: a crash of this open, before it has opened what it recovers, counts as the machine's.
    await assert.rejects(readFile(join(dir, BOOT_FILE)));
    await lock.release();

    // The machine went down: the boot file names another boot.
    await writeFile(join(dir, LOCK_FILE), `${await deadPid()}\n`);
    await writeFile(join(dir, BOOT_FILE), "00000000-0000-0000-0000-000000000000\n");
    lock = await DataDirLock.acquire(dir);
    assert.equal(lock.crashedThisBoot, false);
    await lock.release();

    // A broker that died before it had opened everything left no boot file.
    await writeFile(join(dir, LOCK_FILE), `${await deadPid()}\n`);
    lock = await DataDirLock.acquire(dir);
    assert.equal(lock.crashedThisBoot, false);
    await lock.release();
  });
});

import assert from "node:assert/strict";
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { syncDir } from "../../src/storage/file-ops.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { walPath } from "../../src/storage/segment-name.js";
import { gate, settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

/** File ops whose directory fsyncs are recorded, and held back or failed when the test says. */
class DirSyncOps extends TestFileOps {
  readonly dirSyncs: string[] = [];
  /** While set, directory fsyncs wait for it. */
  dirGate: Promise<void> | null = null;
  /** Directory fsyncs fail with this. */
  dirFailure: Error | null = null;

  async syncDir(dir: string): Promise<void> {
    this.dirSyncs.push(dir);
    if (this.dirGate !== null) await this.dirGate;
    if (this.dirFailure !== null) throw this.dirFailure;
    await syncDir(dir);
  }
}

function acknowledged(p: Promise<unknown>): { done: boolean } {
  const state = { done: false };
  p.then(
    () => {
      state.done = true;
    },
    () => {},
  );
  return state;
}

test("a new log's directory entries are made durable with its first fsync, before it acknowledges anything durable", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "topic", "0");
    await mkdir(join(root, "topic"));
    const ops = new DirSyncOps();
    const held = gate();
    ops.dirGate = held.promise;
    // The open does not wait for directory fsyncs: it ends while they are held back.
    const log = await PartitionLog.open(dir, testConfig(), undefined, { fileOps: ops }, { likelyNew: true });
    assert.deepEqual(
      ops.dirSyncs,
      [join(root, "topic")],
      "the parent's fsync is started, shared, not waited for",
    );
    assert.deepEqual(
      await readdir(dir),
      ["00000000000000000000.wal"],
      "the first segment made under its own name",
    );
    assert.equal((await stat(walPath(dir, 0))).size, testConfig().segmentBytes);

    const durable = log.append(makeBatch("a", 2), { durable: true });
    const state = acknowledged(durable);
    await ops.datasyncs.reached(1);
    await settle(10);
    assert.deepEqual(
      ops.dirSyncs,
      [join(root, "topic"), dir],
      "its own directory is fsynced beside the data",
    );
    assert.equal(state.done, false, "not acknowledged while a directory fsync is held back");
    assert.equal(log.flushedOffset, 0);
    held.open();
    assert.deepEqual(await durable, { baseOffset: 0, lastOffset: 1 });
    assert.equal(log.flushedOffset, 2);

    // Owed once: later fsyncs fsync no directory.
    await log.append(makeBatch("b", 2), { durable: true });
    assert.equal(ops.dirSyncs.length, 2);
    await log.close();
    const again = await PartitionLog.open(dir, testConfig());
    assert.deepEqual(offsetsOf(await readAll(again)), range(0, 4));
    await again.close();
  });
});

test("a failed directory fsync fails the appends waiting for durability, and the log", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "0");
    const ops = new DirSyncOps();
    ops.dirFailure = Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
    const log = await PartitionLog.open(dir, testConfig(), undefined, { fileOps: ops });
    await assert.rejects(
      log.append(makeBatch("a", 2), { durable: true }),
      (err: unknown) => err instanceof ConchError && err.code === ErrorCode.STORAGE_ERROR,
    );
    assert.equal(log.flushedOffset, 0, "nothing counted durable");
    await assert.rejects(log.append(makeBatch("b", 1)), ConchError);
    await log.close().catch(() => {});
  });
});

test("a log whose directory was there fsyncs only its own directory, once", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "0");
    await mkdir(dir);
    const ops = new DirSyncOps();
    // The hint that it is new is only a hint: the directory is listed and kept.
    const log = await PartitionLog.open(
      dir,
      testConfig({ flush: "sync" }),
      undefined,
      { fileOps: ops },
      { likelyNew: true },
    );
    assert.deepEqual(ops.dirSyncs, []);
    await log.append(makeBatch("a", 3));
    await log.append(makeBatch("b", 3));
    assert.deepEqual(ops.dirSyncs, [dir]);
    await log.close();
  });
});

test("a log opened as new over one with data keeps its data", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "0");
    const first = await PartitionLog.open(dir, testConfig());
    await first.append(makeBatch("a", 3));
    await first.close();
    const again = await PartitionLog.open(dir, testConfig(), undefined, {}, { likelyNew: true });
    assert.deepEqual(offsetsOf(await readAll(again)), range(0, 3));
    await again.close();
  });
});

test("a first segment a crash left made but not extended opens empty and takes appends", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "0");
    await mkdir(dir);
    await writeFile(walPath(dir, 0), Buffer.alloc(0));
    const log = await PartitionLog.open(dir, testConfig());
    assert.equal(log.logEndOffset, 0);
    await log.append(makeBatch("a", 2), { durable: true });
    await log.close();
    const again = await PartitionLog.open(dir, testConfig());
    assert.deepEqual(
      (await readAll(again)).map((r) => r.value),
      ["a-0", "a-1"],
    );
    await again.close();
  });
});

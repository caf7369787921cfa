/**
 * Appends are written on the event loop (FileOps.writevSync) while no fsync of the log runs, and
 * through the thread pool (writev) while one does, since a write may then wait for the fsync. Both
 * paths keep the log's promises: offsets, visibility, a failed write failing its appends.
 */
import assert from "node:assert/strict";
import type { FileHandle } from "node:fs/promises";
import { test } from "node:test";
import { defaultFileOps } from "../../src/storage/file-ops.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { gate, settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

/** TestFileOps that can also write synchronously, counting which path each write took. */
class SyncCapableOps extends TestFileOps {
  syncWrites = 0;
  failSyncNext: Error | null = null;

  writevSync(file: FileHandle, buffers: Buffer[], position: number): number {
    if (this.failSyncNext !== null) {
      const err = this.failSyncNext;
      this.failSyncNext = null;
      throw err;
    }
    this.syncWrites++;
    return defaultFileOps.writevSync!(file, buffers, position);
  }
}

/** A log with flush=interval (its timer out of the way) on `ops`. */
function openIntervalLog(dir: string, ops: SyncCapableOps): Promise<PartitionLog> {
  return PartitionLog.open(dir, testConfig({ flush: "interval", flushIntervalMs: 60_000 }), undefined, {
    fileOps: ops,
  });
}

test("writes go out synchronously while no fsync runs, through the pool while one does", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await openIntervalLog(dir, ops);
    await log.append(makeBatch("a", 3));
    assert.equal(ops.syncWrites, 1);
    assert.equal(ops.writes.count, 0, "no thread-pool write");

    // A durable append starts an fsync; hold it, and append meanwhile.
    const held = gate();
    ops.syncGate = held.promise;
    const durable = log.append(makeBatch("d", 1), { durable: true });
    await ops.datasyncs.reached(1);
    const during = log.append(makeBatch("b", 2));
    await ops.writes.reached(1);
    assert.equal(ops.syncWrites, 2, "the write during the fsync went to the pool");
    assert.deepEqual(await during, { baseOffset: 4, lastOffset: 5 });
    held.open();
    ops.syncGate = null;
    assert.deepEqual(await durable, { baseOffset: 3, lastOffset: 3 });

    await log.append(makeBatch("c", 1));
    assert.equal(ops.syncWrites, 3, "back on the event loop once the fsync is over");
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 7));
    await log.close();
  });
});

test("durable appends queued during an fsync are written after it, on the event loop, in one write", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await openIntervalLog(dir, ops);
    const held = gate();
    ops.syncGate = held.promise;
    const first = log.append(makeBatch("d0", 1), { durable: true });
    await ops.datasyncs.reached(1);
    assert.equal(ops.syncWrites, 1);
    // Durable appends while the fsync runs: it cannot cover them, so nothing is written yet.
    const later = [1, 2, 3].map((i) => log.append(makeBatch(`d${i}`, 1), { durable: true }));
    await settle();
    assert.equal(ops.writes.count, 0, "no thread-pool write during the fsync");
    assert.equal(ops.syncWrites, 1, "nor a synchronous one");
    held.open();
    ops.syncGate = null;
    assert.deepEqual(await first, { baseOffset: 0, lastOffset: 0 });
    assert.deepEqual(await Promise.all(later), [
      { baseOffset: 1, lastOffset: 1 },
      { baseOffset: 2, lastOffset: 2 },
      { baseOffset: 3, lastOffset: 3 },
    ]);
    assert.equal(ops.syncWrites, 2, "the three went out together, synchronously, after the fsync");
    assert.equal(ops.writes.count, 0);
    assert.equal(ops.datasyncs.count, 2, "and one more fsync covered them");
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 4));
    await log.close();
  });
});

test("appends of one loop pass share one synchronous write", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "none" }), undefined, { fileOps: ops });
    const appends = [];
    for (let i = 0; i < 5; i++) appends.push(log.append(makeBatch(`x${i}`, 1)));
    await Promise.all(appends);
    assert.equal(ops.syncWrites, 1);
    await log.close();
  });
});

test("a failed synchronous write fails its appends and rewinds the offsets", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "none" }), undefined, { fileOps: ops });
    await log.append(makeBatch("ok", 2));
    ops.failSyncNext = Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
    await assert.rejects(log.append(makeBatch("lost", 3)));
    await settle();
    assert.equal(log.logEndOffset, 2, "offsets of the failed write are given again");
    assert.deepEqual(await log.append(makeBatch("next", 1)), { baseOffset: 2, lastOffset: 2 });
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 3));
    await log.close();
  });
});

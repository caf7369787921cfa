/**
 * Appends are written on the event loop (FileOps.writevSync), also while fsyncs of the log run,
 * and the group commit keeps up to SYNCS_IN_FLIGHT fsyncs running: a durable append written during
 * an fsync gets one of its own at once instead of waiting for the running one to end. Both keep the
 * log's promises: offsets, visibility, a failed write failing its appends.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SYNCS_IN_FLIGHT } from "../../src/storage/flusher.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { gate, SyncCapableOps, settle } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

/** A log with flush=interval (its timer out of the way) on `ops`. */
function openIntervalLog(dir: string, ops: SyncCapableOps): Promise<PartitionLog> {
  return PartitionLog.open(dir, testConfig({ flush: "interval", flushIntervalMs: 60_000 }), undefined, {
    fileOps: ops,
  });
}

test("writes go out on the event loop, also while an fsync runs", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await openIntervalLog(dir, ops);
    await log.append(makeBatch("a", 3));
    assert.equal(ops.syncWrites, 1);

    // A durable append starts an fsync; hold it, and append meanwhile.
    const held = gate();
    ops.syncGate = held.promise;
    const durable = log.append(makeBatch("d", 1), { durable: true });
    await ops.datasyncs.reached(1);
    assert.deepEqual(await log.append(makeBatch("b", 2)), { baseOffset: 4, lastOffset: 5 });
    assert.equal(ops.syncWrites, 3, "written on the event loop and acknowledged during the fsync");
    assert.equal(ops.writes.count, 0, "no thread-pool write");
    held.open();
    ops.syncGate = null;
    assert.deepEqual(await durable, { baseOffset: 3, lastOffset: 3 });
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 6));
    await log.close();
  });
});

test("a durable append written during an fsync is acknowledged by an fsync of its own, without waiting for the running one", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await openIntervalLog(dir, ops);
    const held = gate();
    ops.syncGate = held.promise;
    let firstDone = false;
    const first = log.append(makeBatch("d0", 1), { durable: true }).then((r) => {
      firstDone = true;
      return r;
    });
    await ops.datasyncs.reached(1);
    ops.syncGate = null; // only the first fsync is held
    assert.deepEqual(await log.append(makeBatch("d1", 1), { durable: true }), {
      baseOffset: 1,
      lastOffset: 1,
    });
    assert.equal(ops.datasyncs.count, 2, "a second fsync ran beside the held one");
    // The second fsync began after d0 was written, so it covers d0 too.
    await settle();
    assert.equal(firstDone, true, "the held fsync's append is durable once a later fsync ended");
    assert.deepEqual(await first, { baseOffset: 0, lastOffset: 0 });
    held.open();
    await log.flush();
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 2));
    await log.close();
  });
});

test("with every fsync slot busy, the durable appends written meanwhile share one fsync", async () => {
  await withTempDir(async (dir) => {
    const ops = new SyncCapableOps();
    const log = await openIntervalLog(dir, ops);
    const held = gate();
    ops.syncGate = held.promise;
    const busy = [];
    for (let i = 0; i < SYNCS_IN_FLIGHT; i++) {
      busy.push(log.append(makeBatch(`busy${i}`, 1), { durable: true }));
      await ops.datasyncs.reached(i + 1);
    }
    const writesBefore = ops.syncWrites;
    let acked = 0;
    const waiting = [];
    for (let i = 0; i < 10; i++) {
      waiting.push(log.append(makeBatch(`w${i}`, 1), { durable: true }).then(() => acked++));
      await settle(1); // each in a pass of its own: ten writes, as from ten connections
    }
    await settle();
    assert.equal(ops.syncWrites - writesBefore, 10, "written while the fsyncs run");
    assert.equal(ops.datasyncs.count, SYNCS_IN_FLIGHT, "no fsync beyond the slots");
    assert.equal(acked, 0, "none acknowledged before an fsync that began after it");
    held.open();
    ops.syncGate = null;
    await Promise.all([...busy, ...waiting]);
    assert.equal(ops.datasyncs.count, SYNCS_IN_FLIGHT + 1, "the ten waiting appends took one fsync");
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

import assert from "node:assert/strict";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { gate, keepAlive, settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

test("flush=sync acknowledges only after an fsync, and appends waiting together share one", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "sync" }), undefined, { fileOps: ops });
    const held = gate();
    ops.syncGate = held.promise;
    const syncsBefore = ops.datasyncs.count;

    let acked = 0;
    const first = log.append(makeBatch("a", 2)).then((r) => {
      acked++;
      return r;
    });
    await ops.writes.reached(1);
    await ops.datasyncs.reached(syncsBefore + 1);
    await settle();
    assert.equal(acked, 0, "written but not yet fsynced: not acknowledged");
    assert.equal(log.highWatermark, 0, "not visible to readers before the fsync");

    // These are written while the first fsync is held; they all wait for the next one.
    const more = [];
    for (let i = 0; i < 10; i++) more.push(log.append(makeBatch(`b${i}`, 1)).then(() => acked++));
    await ops.writes.reached(2);
    await settle();
    assert.equal(acked, 0);

    held.open();
    ops.syncGate = null;
    assert.deepEqual(await first, { baseOffset: 0, lastOffset: 1 });
    await Promise.all(more);
    assert.equal(acked, 11);
    assert.equal(ops.datasyncs.count - syncsBefore, 2, "11 appends, 2 fsyncs (group commit)");
    assert.equal(log.highWatermark, 12);
    await log.close();
  });
});

test("flush=interval acknowledges once written, fsyncs on its timer; durable appends wait for an fsync", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(
      dir,
      testConfig({ flush: "interval", flushIntervalMs: 10 }),
      undefined,
      {
        fileOps: ops,
      },
    );
    const held = gate();
    ops.syncGate = held.promise;
    const syncsBefore = ops.datasyncs.count;
    await log.append(makeBatch("fast", 1));
    assert.equal(log.highWatermark, 1, "visible once written");
    await keepAlive(ops.datasyncs.reached(syncsBefore + 1)); // the timer asked for an fsync

    let durableDone = false;
    const durable = log.append(makeBatch("slow", 1), { durable: true }).then(() => {
      durableDone = true;
    });
    await ops.writes.reached(2);
    await settle();
    assert.equal(durableDone, false, "a durable append waits for an fsync covering it");
    assert.equal(log.highWatermark, 2, "but is visible to readers at once under interval");
    held.open();
    ops.syncGate = null;
    await durable;
    await log.close();
  });
});

test("flush=none never fsyncs on its own, but durable appends and flush() do", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "none", flushIntervalMs: 1 }), undefined, {
      fileOps: ops,
    });
    const syncsBefore = ops.datasyncs.count;
    for (let i = 0; i < 20; i++) await log.append(makeBatch(`n${i}`, 1));
    await settle(20);
    assert.equal(ops.datasyncs.count, syncsBefore);
    await log.append(makeBatch("d", 1), { durable: true });
    assert.equal(ops.datasyncs.count, syncsBefore + 1);
    await log.append(makeBatch("e", 1));
    await log.flush();
    assert.equal(ops.datasyncs.count, syncsBefore + 2);
    await log.close();
  });
});

test("switching from sync to interval makes written data visible at once", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const config = testConfig({ flush: "sync" });
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops });
    const held = gate();
    ops.syncGate = held.promise;
    const pending = log.append(makeBatch("s", 3));
    await ops.writes.reached(1);
    await settle();
    assert.equal(log.highWatermark, 0);
    log.updateConfig({ ...config, flush: "interval" });
    assert.equal(log.highWatermark, 3);
    held.open();
    ops.syncGate = null;
    await pending;
    await log.close();
  });
});

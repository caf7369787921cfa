import assert from "node:assert/strict";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Wakeup } from "../../src/storage/wakeup.js";
import { gate, settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

test("waitForData wakes when the high watermark passes the offset", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    let woke = false;
    const waiting = log.waitForData(0, 60_000).then(() => {
      woke = true;
    });
    await settle();
    assert.equal(woke, false);
    assert.equal(log.waitingReaders, 1);
    await log.append(makeBatch("a", 1));
    await waiting;
    assert.equal(log.waitingReaders, 0);
    await log.waitForData(0, 60_000); // already past: resolves at once
    await log.close();
  });
});

test("waitForData resolves on timeout and on abort, and an aborted waiter leaves at once", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    await log.waitForData(0, 5);
    assert.equal(log.waitingReaders, 0);

    const controllers = Array.from({ length: 100 }, () => new AbortController());
    const waits = controllers.map((c) => log.waitForData(0, 60_000, c.signal));
    assert.equal(log.waitingReaders, 100);
    for (const c of controllers) c.abort();
    assert.equal(log.waitingReaders, 0, "removed synchronously on abort");
    await Promise.all(waits);

    const aborted = new AbortController();
    aborted.abort();
    await log.waitForData(0, 60_000, aborted.signal);
    assert.equal(log.waitingReaders, 0);
    await log.close();
  });
});

test("a Wakeup ends the wait parked on it at once, and every later wait on it resolves immediately", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const wake = new Wakeup();
    let woke = false;
    const waiting = log.waitForData(0, 60_000, wake).then(() => {
      woke = true;
    });
    assert.equal(log.waitingReaders, 1);
    wake.wake();
    assert.equal(log.waitingReaders, 0, "removed synchronously on wake");
    await waiting;
    assert.equal(woke, true);
    await log.waitForData(0, 60_000, wake); // already woken: resolves at once
    assert.equal(log.waitingReaders, 0);
    // A wait that ends with data lets go of the Wakeup: waking it later touches nothing.
    const other = new Wakeup();
    const second = log.waitForData(0, 60_000, other);
    await log.append(makeBatch("a", 1));
    await second;
    other.wake();
    assert.equal(log.waitingReaders, 0);
    await log.close();
  });
});

test("under flush=sync a waiter wakes only after the fsync", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "sync" }), undefined, { fileOps: ops });
    const held = gate();
    ops.syncGate = held.promise;
    let woke = false;
    const waiting = log.waitForData(0, 60_000).then(() => {
      woke = true;
    });
    const appended = log.append(makeBatch("a", 1));
    await ops.writes.reached(1);
    await settle();
    assert.equal(woke, false);
    held.open();
    ops.syncGate = null;
    await appended;
    await waiting;
    await log.close();
  });
});

test("close wakes every waiter", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const waits = [log.waitForData(0, 60_000), log.waitForData(5, 60_000)];
    await log.close();
    await Promise.all(waits);
    assert.equal(log.waitingReaders, 0);
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
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

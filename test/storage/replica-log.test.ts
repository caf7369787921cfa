/**
 * What replication needs of a partition log: a follower's appends keep the leader's bytes and
 * offsets, truncation cuts whole batches and survives a reopen, the leader-epoch file stays
 * consistent with the log through recovery, and a visibility ceiling holds readers back.
 */
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchLastOffset, recordSize } from "../../src/format/batch-header.js";
import { type ConchError, ErrorCode } from "../../src/format/errors.js";
import { LEADER_EPOCH_NAME } from "../../src/storage/leader-epochs.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

/** Every stored batch of `log` from its start to its local end, as one buffer. */
async function allBytes(log: PartitionLog): Promise<Buffer> {
  const parts: Buffer[] = [];
  let offset = log.logStartOffset;
  while (offset < log.localEndOffset) {
    const { records } = await log.readReplica(offset, 1 << 20);
    parts.push(records);
    for (let at = 0; at < records.length; at += recordSize(records, at))
      offset = batchLastOffset(records, at) + 1;
  }
  return Buffer.concat(parts);
}

test("a follower's appends keep the leader's bytes and offsets, across segment rolls", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 256 });
    const leader = await PartitionLog.open(join(dir, "leader"), config);
    const follower = await PartitionLog.open(join(dir, "follower"), config);
    for (let i = 0; i < 100; i++) await leader.append(makeBatch(`m${i}`, 1 + (i % 3)));
    let offset = 0;
    while (offset < leader.logEndOffset) {
      const { records } = await leader.readReplica(offset, 700);
      const ack = await follower.appendReplicated(records);
      assert.equal(ack.baseOffset, offset);
      offset = ack.lastOffset + 1;
    }
    assert.equal(follower.logEndOffset, leader.logEndOffset);
    assert.ok(follower.segmentCount > 1, `${follower.segmentCount} segments`);
    assert.deepEqual(await allBytes(follower), await allBytes(leader));
    await leader.close();
    await follower.close();
  });
});

test("a replicated append that does not carry on from the log end is refused and changes nothing", async () => {
  await withTempDir(async (dir) => {
    const leader = await PartitionLog.open(join(dir, "leader"), testConfig());
    const follower = await PartitionLog.open(join(dir, "follower"), testConfig());
    await leader.append(makeBatch("a", 2));
    await leader.append(makeBatch("b", 2));
    const second = (await leader.readReplica(2, 1)).records;
    await assert.rejects(follower.appendReplicated(second), (err: ConchError) => {
      assert.equal(err.code, ErrorCode.INVALID_BATCH);
      return true;
    });
    assert.equal(follower.logEndOffset, 0);
    const both = (await leader.readReplica(0, 1 << 20)).records;
    await follower.appendReplicated(both);
    await assert.rejects(follower.appendReplicated(both), /does not follow the log end 4/);
    assert.equal(follower.logEndOffset, 4);
    await leader.close();
    await follower.close();
  });
});

test("truncateTo cuts whole batches across segments, takes appends after, and survives a reopen", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 256 });
    let log = await PartitionLog.open(dir, config);
    for (let i = 0; i < 120; i++) await log.append(makeBatch(`m${i}`, 2));
    const segmentsBefore = log.segmentCount;
    await log.epochs.assign(1, 0);
    await log.epochs.assign(2, 101 * 2);
    // Offset 101 is the second record of batch 50 (offsets 100-101): that batch goes entirely.
    assert.equal(await log.truncateTo(101), 100);
    assert.equal(log.logEndOffset, 100);
    assert.equal(log.highWatermark, 100);
    assert.ok(log.segmentCount < segmentsBefore);
    assert.deepEqual(log.epochs.entries, [{ epoch: 1, startOffset: 0 }]);
    assert.deepEqual(offsetsOf(await readAll(log, 700)), range(0, 100));
    const ack = await log.append(makeBatch("after", 3));
    assert.equal(ack.baseOffset, 100);
    await log.close();

    log = await PartitionLog.open(dir, config);
    assert.equal(log.logEndOffset, 103);
    const records = await readAll(log, 700);
    assert.deepEqual(offsetsOf(records), range(0, 103));
    assert.equal(records[99]?.value, "m49-1");
    assert.equal(records[100]?.value, "after-0");
    assert.deepEqual(log.epochs.entries, [{ epoch: 1, startOffset: 0 }]);
    // To the very start: an empty log that still takes appends at 0.
    assert.equal(await log.truncateTo(0), 0);
    assert.equal(log.segmentCount, 1);
    assert.equal((await log.append(makeBatch("fresh", 1))).baseOffset, 0);
    await log.close();
  });
});

test("recovery drops leader-epoch entries past the log end, and a damaged epoch file's tail", async () => {
  await withTempDir(async (dir) => {
    let log = await PartitionLog.open(dir, testConfig());
    for (let i = 0; i < 5; i++) await log.append(makeBatch(`m${i}`, 2));
    await log.epochs.assign(3, 0);
    await log.epochs.assign(5, 6);
    await log.close();
    // As if the entry of epoch 7 reached the disk and its data did not.
    await writeFile(join(dir, LEADER_EPOCH_NAME), "3 0\n5 6\n7 10\n9 12\n");
    log = await PartitionLog.open(dir, testConfig());
    assert.deepEqual(log.epochs.entries, [
      { epoch: 3, startOffset: 0 },
      { epoch: 5, startOffset: 6 },
      { epoch: 7, startOffset: 10 },
    ]);
    assert.deepEqual(log.epochs.endOf(5, log.logEndOffset), { epoch: 5, endOffset: 10 });
    assert.deepEqual(log.epochs.endOf(4, log.logEndOffset), { epoch: 3, endOffset: 6 });
    assert.deepEqual(log.epochs.endOf(8, log.logEndOffset), { epoch: 7, endOffset: 10 });
    assert.deepEqual(log.epochs.endOf(2, log.logEndOffset), { epoch: -1, endOffset: -1 });
    await log.close();
    await writeFile(join(dir, LEADER_EPOCH_NAME), "3 0\n2 4\n5 6\n");
    log = await PartitionLog.open(dir, testConfig());
    assert.deepEqual(log.epochs.entries, [{ epoch: 3, startOffset: 0 }]);
    assert.equal(await readFile(join(dir, LEADER_EPOCH_NAME), "utf8"), "3 0\n");
    await assert.rejects(log.epochs.assign(2, 10), /does not follow/);
    await log.close();
  });
});

test("readers never pass the visibility ceiling; between it and the log end is OFFSET_NOT_AVAILABLE", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    log.setVisibilityCeiling(0);
    for (let i = 0; i < 4; i++) await log.append(makeBatch(`m${i}`, 2));
    assert.equal(log.highWatermark, 0);
    assert.equal(log.localEndOffset, 8);
    assert.equal((await log.read(0, 1 << 20)).records.length, 0);
    await assert.rejects(log.read(4, 1 << 20), (err: ConchError) => {
      assert.equal(err.code, ErrorCode.OFFSET_NOT_AVAILABLE);
      assert.ok(err.retriable);
      return true;
    });
    await assert.rejects(
      log.read(9, 1 << 20),
      (err: ConchError) => err.code === ErrorCode.OFFSET_OUT_OF_RANGE,
    );
    assert.equal(log.readNow(4, 1 << 20), undefined);
    // A long poll at the ceiling wakes when the ceiling moves, not when data is written.
    const woken = log.waitForData(0, 60_000);
    log.setVisibilityCeiling(4);
    await woken;
    assert.equal(log.highWatermark, 4);
    assert.deepEqual(offsetsOf(await readAll(log)), range(0, 4));
    log.setVisibilityCeiling(100);
    assert.equal(log.highWatermark, 8);
    await log.close();
  });
});

test("restartAt empties the log and starts it again at an offset past its end, across a reopen", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 256 });
    let log = await PartitionLog.open(dir, config);
    for (let i = 0; i < 60; i++) await log.append(makeBatch(`m${i}`, 2));
    await log.epochs.assign(1, 0);
    await log.restartAt(500);
    assert.equal(log.logStartOffset, 500);
    assert.equal(log.logEndOffset, 500);
    assert.equal(log.highWatermark, 500);
    assert.equal(log.segmentCount, 1);
    assert.deepEqual(log.epochs.entries, []);
    assert.equal((await log.read(500, 1 << 20)).records.length, 0);
    await assert.rejects(
      log.read(10, 1 << 20),
      (err: ConchError) => err.code === ErrorCode.OFFSET_OUT_OF_RANGE,
    );
    assert.equal((await log.append(makeBatch("after", 3))).baseOffset, 500);
    await log.close();
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.endsWith(".wal")),
      ["00000000000000000500.wal"],
    );
    log = await PartitionLog.open(dir, config);
    assert.equal(log.logStartOffset, 500);
    assert.deepEqual(offsetsOf(await readAll(log)), range(500, 503));
    await log.close();
  });
});

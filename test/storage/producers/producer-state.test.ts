/**
 * Idempotent producers on one partition log: duplicates answered with the original offsets and
 * stored once, out-of-order and fenced batches refused, sequences wrapping as Kafka's, and the
 * table's memory bounded.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../../src/format/errors.js";
import { MAX_SEQUENCE } from "../../../src/format/layout.js";
import { PartitionLog } from "../../../src/storage/partition-log.js";
import { ProducerCheck, ProducerTable } from "../../../src/storage/producers/producer-table.js";
import { makeBatch, readAll, testConfig, withTempDir } from "../helpers.js";
import { producerBatch } from "./producer-batches.js";

function code(c: number): (err: unknown) => boolean {
  return (err) => err instanceof ConchError && err.code === c;
}

test("a retried batch is answered with its original offsets and stored once", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    try {
      const first = await log.append(producerBatch(7, 0, 0, 3));
      await log.append(makeBatch("other", 2));
      const second = await log.append(producerBatch(7, 0, 3, 2));
      const retry = await log.append(producerBatch(7, 0, 0, 3));
      assert.deepEqual(retry, {
        baseOffset: first.baseOffset,
        lastOffset: first.lastOffset,
        duplicate: true,
      });
      const retry2 = await log.append(producerBatch(7, 0, 3, 2));
      assert.equal(retry2.baseOffset, second.baseOffset);
      assert.equal(log.logEndOffset, 7);
      assert.deepEqual(
        (await readAll(log)).map((r) => r.value),
        ["s0-0", "s0-1", "s0-2", "other-0", "other-1", "s3-0", "s3-1"],
      );
    } finally {
      await log.close();
    }
  });
});

test("two retries appended in the same tick: the second is the duplicate", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    try {
      const batch = producerBatch(9, 0, 0, 4);
      const [a, b] = await Promise.all([log.append(batch), log.append(batch)]);
      assert.equal(a.duplicate, undefined);
      assert.deepEqual(b, { baseOffset: 0, lastOffset: 3, duplicate: true });
      assert.equal(log.logEndOffset, 4);
    } finally {
      await log.close();
    }
  });
});

test("out of order, unknown producer and fenced epochs are refused and store nothing", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    try {
      await assert.rejects(log.append(producerBatch(1, 0, 5)), code(ErrorCode.UNKNOWN_PRODUCER_ID));
      await log.append(producerBatch(1, 0, 0, 2)); // sequences 0-1
      await assert.rejects(log.append(producerBatch(1, 0, 3)), code(ErrorCode.OUT_OF_ORDER_SEQUENCE));
      await assert.rejects(log.append(producerBatch(1, 0, 1)), code(ErrorCode.OUT_OF_ORDER_SEQUENCE));
      // A new epoch starts over at 0, and fences the old one.
      await assert.rejects(log.append(producerBatch(1, 1, 2)), code(ErrorCode.OUT_OF_ORDER_SEQUENCE));
      await log.append(producerBatch(1, 1, 0, 1));
      await assert.rejects(log.append(producerBatch(1, 0, 2)), code(ErrorCode.INVALID_PRODUCER_EPOCH));
      await log.append(producerBatch(1, 1, 1, 1));
      assert.equal(log.logEndOffset, 4);
    } finally {
      await log.close();
    }
  });
});

test("a batch with a producer id must be alone in its append", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    try {
      const two = Buffer.concat([producerBatch(1, 0, 0), producerBatch(1, 0, 2)]);
      await assert.rejects(log.append(two), code(ErrorCode.INVALID_BATCH));
      assert.equal(log.logEndOffset, 0);
    } finally {
      await log.close();
    }
  });
});

test("sequences wrap after 2^31 - 1 to 0, and a wrapped batch is still matched", () => {
  const table = new ProducerTable({ expirationMs: 60_000, maxProducers: 10 });
  // Sequences 2^31-2, 2^31-1, 0: recorded as the log replays it (no check).
  const wrapped = producerBatch(3, 0, MAX_SEQUENCE - 1, 3);
  table.record(wrapped, 0, 100, 0);
  assert.equal(table.get(3)?.lastSequence, 0);
  assert.equal(table.check(wrapped, 0), ProducerCheck.DUPLICATE);
  assert.equal(table.duplicateBaseOffset, 100);
  assert.equal(table.duplicateLastOffset, 102);
  assert.equal(table.check(producerBatch(3, 0, 1), 0), ProducerCheck.APPEND);
  assert.throws(() => table.check(producerBatch(3, 0, 0), 0), code(ErrorCode.OUT_OF_ORDER_SEQUENCE));
});

function ids(table: ProducerTable): number[] {
  return [...table.entries()].map(([id]) => id).sort((a, b) => a - b);
}

test("the table forgets idle producers, and the longest idle past its cap", () => {
  const table = new ProducerTable({ expirationMs: 1000, maxProducers: 3 });
  table.record(producerBatch(1, 0, 0), 0, 0, 0);
  table.record(producerBatch(2, 0, 0), 0, 2, 10);
  table.record(producerBatch(3, 0, 0), 0, 4, 20);
  // Producer 1 appends again: producer 2 is now the longest idle.
  table.record(producerBatch(1, 0, 2), 0, 6, 30);
  table.record(producerBatch(4, 0, 0), 0, 8, 40);
  assert.deepEqual(ids(table), [1, 3, 4]);
  // Past the expiration (1 s after their last use) the idle ones go when room is needed.
  table.expire(1025);
  assert.deepEqual(ids(table), [1, 4]);
  // A forgotten producer's next batch (not at 0) is UNKNOWN_PRODUCER_ID, as in Kafka.
  assert.throws(() => table.check(producerBatch(2, 0, 2), 0), code(ErrorCode.UNKNOWN_PRODUCER_ID));
  // However many ids a client makes up, the table holds at most the cap.
  for (let id = 100; id < 200; id++) table.record(producerBatch(id, 0, 0), 0, id, 2000);
  assert.equal(table.size, 3);
});

test("only the last five batches are remembered", () => {
  const table = new ProducerTable({ expirationMs: 60_000, maxProducers: 10 });
  for (let i = 0; i < 6; i++) table.record(producerBatch(5, 0, i * 2), 0, i * 2, 0);
  assert.throws(() => table.check(producerBatch(5, 0, 0), 0), code(ErrorCode.OUT_OF_ORDER_SEQUENCE));
  assert.equal(table.check(producerBatch(5, 0, 2), 0), ProducerCheck.DUPLICATE);
  assert.equal(table.duplicateBaseOffset, 2);
});

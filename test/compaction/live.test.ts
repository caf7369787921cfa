import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { IoThrottle } from "../../src/storage/compaction/io-throttle.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import {
  compactConfig,
  compactModel,
  keyedBatch,
  readAll,
  type StoredRecord,
  segmentBases,
  T0,
  withTempDir,
} from "./helpers.js";

function keylessBatch(value: string): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add(value, null, T0);
  return Buffer.from(b.finish());
}

function isCode(code: number): (err: unknown) => boolean {
  return (err: unknown) => (err as { code?: number }).code === code;
}

test("produce and fetch keep working while compaction runs (I/O capped); the result matches the model", async () => {
  await withTempDir(async (dir) => {
    const config = compactConfig({ compactionBytesPerSec: 256 * 1024 });
    const log = await PartitionLog.open(dir, config);
    try {
      const appended: StoredRecord[] = [];
      let producing = true;
      const producer = (async () => {
        for (let i = 0; i < 600; i++) {
          const put = { key: `k${i % 17}`, value: i % 11 === 0 ? null : `v${i}`, timestampMs: T0 };
          const ack = await log.append(keyedBatch([put]));
          assert.equal(ack.baseOffset, i, "offsets are assigned in order, never reused");
          appended.push({ offset: i, ...put });
          if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        producing = false;
      })();
      let reads = 0;
      const consumer = (async () => {
        const cursor = new RecordCursor();
        while (producing) {
          // A consumer following the log from the start, as far as it is visible.
          let offset = log.logStartOffset;
          let last = -1;
          while (offset < log.highWatermark) {
            const { records } = await log.read(offset, 300);
            reads++;
            if (records.length === 0) break;
            cursor.reset(records);
            while (cursor.next()) {
              if (cursor.offset < offset) continue;
              assert.ok(cursor.offset > last, "offsets increase");
              last = cursor.offset;
              offset = cursor.offset + 1;
            }
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      let passes = 0;
      let removed = 0;
      while (producing) {
        const result = await log.compact(T0);
        passes++;
        removed += result.recordsRemoved;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all([producer, consumer]);
      assert.ok(
        passes > 1 && removed > 0 && reads > 0,
        `passes ${passes}, removed ${removed}, reads ${reads}`,
      );
      const bases = await segmentBases(dir);
      await log.compact(T0);
      assert.deepEqual(
        await readAll(log),
        compactModel(appended, bases.at(-1)!, T0, config.deleteRetentionMs),
      );
    } finally {
      await log.close();
    }
  });
});

test("the I/O throttle lets a second's worth through, then makes each take wait for its bytes", async () => {
  let now = 0;
  const waits: number[] = [];
  const throttle = new IoThrottle(
    () => 1000,
    () => now,
    async (ms) => {
      waits.push(ms);
      now += ms;
    },
  );
  await throttle.take(1000);
  assert.deepEqual(waits, [], "the bucket starts full");
  await throttle.take(500);
  assert.deepEqual(waits, [500]);
  now += 250;
  await throttle.take(500);
  assert.deepEqual(waits, [500, 250], "what accrued meanwhile counts");
  now += 10_000;
  await throttle.take(1200);
  assert.deepEqual(waits, [500, 250, 200], "the bucket holds one second at most");
  const uncapped = new IoThrottle(
    () => -1,
    () => now,
    async () => assert.fail("no cap, no wait"),
  );
  await uncapped.take(1e9);
});

test("a compacted log refuses records without a key; other policies take them", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig({ cleanupPolicy: "delete" }));
    try {
      await log.append(keylessBatch("no key, fine"));
      await log.append(keyedBatch([{ key: "a", value: "1", timestampMs: T0 }]));
      log.updateConfig(compactConfig({ cleanupPolicy: "compact,delete" }));
      await assert.rejects(log.append(keylessBatch("no key")), isCode(ErrorCode.INVALID_BATCH));
      const mixed = new BatchBuilder({ slabBytes: 4096 });
      mixed.add("keyed", "k", T0);
      mixed.add("keyless", null, T0);
      await assert.rejects(log.append(mixed.finish()), isCode(ErrorCode.INVALID_BATCH));
      assert.equal(log.logEndOffset, 2, "nothing of a refused append was written");
      // Malformed bytes are still reported as such by the format checks.
      await assert.rejects(
        log.append(Buffer.from("garbage that is not a batch at all")),
        isCode(ErrorCode.INVALID_BATCH),
      );
      // Keyless records from before the change are dropped by compaction.
      for (let i = 0; i < 30; i++)
        await log.append(keyedBatch([{ key: `k${i}`, value: "x".repeat(40), timestampMs: T0 }]));
      await log.compact(T0);
      const records = await readAll(log);
      assert.ok(!records.some((r) => r.key === null));
      assert.ok(records.some((r) => r.key === "a"));
    } finally {
      await log.close();
    }
  });
});

test("age and size retention delete nothing with compact alone, and do with compact,delete", async () => {
  await withTempDir(async (dir) => {
    const config = compactConfig({ retentionMs: 1, retentionBytes: 100 });
    const log = await PartitionLog.open(dir, config, undefined, { retentionCheckMs: 0 });
    try {
      for (let i = 0; i < 40; i++)
        await log.append(keyedBatch([{ key: `k${i}`, value: "x".repeat(60), timestampMs: T0 }]));
      const before = (await segmentBases(dir)).length;
      assert.ok(before > 2);
      assert.equal(await log.enforceRetention(Date.now()), 0);
      assert.equal(log.logStartOffset, 0);
      log.updateConfig({ ...config, cleanupPolicy: "compact,delete" });
      assert.equal(await log.enforceRetention(Date.now()), before - 1);
      assert.ok(log.logStartOffset > 0);
      // Compaction and retention together leave a readable log.
      await log.compact(T0);
      const records = await readAll(log);
      assert.ok(records.length > 0);
    } finally {
      await log.close();
    }
  });
});

test("the delete policy never compacts; min.compaction.lag.ms holds young segments back", async () => {
  await withTempDir(async (dir) => {
    const config = compactConfig({ cleanupPolicy: "delete", minCompactionLagMs: 10_000 });
    const log = await PartitionLog.open(dir, config);
    try {
      for (let i = 0; i < 40; i++)
        await log.append(
          keyedBatch([{ key: `k${i % 2}`, value: `v${i}-${"x".repeat(40)}`, timestampMs: T0 + i }]),
        );
      const all = await readAll(log);
      assert.equal((await log.compact(T0 + 100_000)).recordsRemoved, 0, "delete policy");
      log.updateConfig({ ...config, cleanupPolicy: "compact" });
      assert.equal((await log.compact(T0 + 100)).recordsRemoved, 0, "every segment is younger than the lag");
      assert.deepEqual(await readAll(log), all);
      const result = await log.compact(T0 + 100_000);
      assert.ok(result.recordsRemoved > 0);
    } finally {
      await log.close();
    }
  });
});

test("in the background, a closed segment of a compacted log is taken up within compactionDelayMs", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig({ compactionDelayMs: 20 }));
    try {
      const now = Date.now();
      for (let i = 0; i < 40; i++)
        await log.append(keyedBatch([{ key: "same", value: `v${i}-${"x".repeat(40)}`, timestampMs: now }]));
      const deadline = Date.now() + 10_000;
      let records = await readAll(log);
      while (records.length === 40 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        records = await readAll(log);
      }
      assert.ok(records.length < 40, "the background pass removed superseded records");
      assert.equal(records.at(-1)!.value?.startsWith("v39-"), true, "the newest value is kept");
    } finally {
      await log.close();
    }
  });
});

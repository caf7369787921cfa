/**
 * Compaction and compressed batches (docs/format.md, Compressed batches): a compressed batch is
 * kept whole, byte for byte, while its records' keys still supersede older records elsewhere; and
 * a compacted log looks inside a compressed batch for records without a key.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { batchCodec, compressBatch, expandBatches } from "../../src/format/compressed-batch.js";
import { ErrorCode } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { checkBatch } from "../../src/format/validate.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { compactConfig, T0, withTempDir } from "./helpers.js";

/** [offset, key, value] of every record from the log start, and the codec of each stored batch by base offset. */
async function readBack(
  log: PartitionLog,
): Promise<{ records: [number, string, string | null][]; codecs: Map<number, number> }> {
  const records: [number, string, string | null][] = [];
  const codecs = new Map<number, number>();
  const c = new RecordCursor();
  let offset = log.logStartOffset;
  for (;;) {
    const read = await log.read(offset, 1 << 20);
    if (read.records.length === 0) return { records, codecs };
    for (let at = 0; at < read.records.length; ) {
      const size = checkBatch(read.records, at, read.records.length, 1 << 30);
      assert.ok(size > 0, `batch at ${at}: ${size}`);
      codecs.set(Number(read.records.readBigUInt64BE(at + 9)), batchCodec(read.records, at));
      at += size;
    }
    c.reset(expandBatches(read.records, 0, read.records.length, 1 << 20));
    while (c.next()) {
      if (c.offset < offset) continue;
      offset = c.offset + 1;
      records.push([c.offset, c.key()!.toString(), c.valueNull ? null : c.value().toString()]);
    }
  }
}

test("compaction keeps a compressed batch whole, and its keys supersede older records", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig({ deleteRetentionMs: 1000 }));
    try {
      const b = new BatchBuilder({ slabBytes: 4096 });
      b.add("old a", "a", T0);
      b.add("old b", "b", T0);
      await log.append(Buffer.from(b.finish())); // 0, 1
      b.add("new a", "a", T0);
      b.add("first c", "c", T0);
      b.add(null, "d", T0); // a tombstone, expired by the time of compaction
      const compressed = compressBatch(b.finish(), 4);
      await log.append(compressed); // 2, 3, 4
      b.add("second c", "c", T0);
      await log.append(Buffer.from(b.finish())); // 5
      for (let i = 0; i < 30; i++) {
        b.add(`filler ${i}`, "f", T0);
        await log.append(Buffer.from(b.finish()));
      }
      const before = (await readBack(log)).records.length;
      const result = await log.compact(T0 + 10_000);
      const { records, codecs } = await readBack(log);
      // "old a" went: the compressed batch's "new a" superseded it. The compressed batch is all
      // there, its superseded "first c" and its expired tombstone too, still compressed.
      assert.deepEqual(records.slice(0, 5), [
        [1, "b", "old b"],
        [2, "a", "new a"],
        [3, "c", "first c"],
        [4, "d", null],
        [5, "c", "second c"],
      ]);
      assert.equal(codecs.get(2), 4);
      assert.ok(result.recordsRemoved >= 1);
      assert.ok(records.length < before);
      // Byte for byte as appended (its base offset stamped).
      const raw = (await log.read(2, 1 << 20)).records;
      const stored = Buffer.from(compressed);
      stored.writeBigUInt64BE(2n, 9);
      assert.deepEqual(raw.subarray(0, stored.length), stored);
    } finally {
      await log.close();
    }
  });
});

test("a compacted log refuses a compressed batch holding a record without a key, and takes keyed ones", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig());
    try {
      const b = new BatchBuilder({ slabBytes: 4096 });
      for (const codec of [1, 2, 3, 4] as const) {
        for (let i = 0; i < 20; i++) b.add(`value ${i}`, `key ${i}`, T0);
        b.add("keyless", null, T0);
        await assert.rejects(
          log.append(compressBatch(b.finish(), codec)),
          (e: unknown) => (e as { code?: number }).code === ErrorCode.INVALID_BATCH,
          `codec ${codec}`,
        );
        for (let i = 0; i < 20; i++) b.add(`value ${i}`, `key ${i}`, T0);
        await log.append(compressBatch(b.finish(), codec));
      }
      assert.equal(log.logEndOffset, 80);
    } finally {
      await log.close();
    }
  });
});

/**
 * Kafka batches stored as they came (attribute bit 4) in a compacted log: keys are read from the
 * Kafka records (a gzip batch's through the codec), a Kafka batch is kept whole while any of its
 * records is live and dropped whole when none is, and a keyless Kafka record is refused.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { recordSize } from "../../src/format/batch-header.js";
import { ErrorCode } from "../../src/format/errors.js";
import { ATTRIBUTES_AT, CRC_AT, RECORDS_AT, recordBatchCrc } from "../../src/format/kafka/record-batch.js";
import { isStoredKafkaBatch, StoredKafkaToConch } from "../../src/format/kafka/stored-kafka.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { StoringBatches } from "../../src/kafka/convert/storing-batches.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import type { PartitionLog } from "../../src/storage/partition-log.js";
import { PartitionLog as Log } from "../../src/storage/partition-log.js";
import { compactConfig, T0, withTempDir } from "./helpers.js";

const storing = new StoringBatches();

/** A Kafka batch of [key, value] records, enveloped as the Kafka listener stores it. */
function kafkaBatch(records: [string | null, string | null][], gzip = false): Buffer {
  const b = new RecordBatchBuilder();
  for (const [k, v] of records) {
    b.add(T0, k === null ? null : Buffer.from(k), v === null ? null : Buffer.from(v));
  }
  let batch = b.finish({ baseOffset: 0 });
  if (gzip) {
    batch = Buffer.concat([batch.subarray(0, RECORDS_AT), gzipSync(batch.subarray(RECORDS_AT))]);
    batch.writeInt32BE(batch.length - 12, 8);
    batch.writeInt16BE(1, ATTRIBUTES_AT);
    batch.writeUInt32BE(recordBatchCrc(batch, 0, batch.length), CRC_AT);
  }
  return Buffer.from(storing.fromKafka(batch, 1 << 20, T0));
}

async function readBack(log: PartitionLog): Promise<{ pairs: string[]; kafkaBatches: number }> {
  const pairs: string[] = [];
  let kafkaBatches = 0;
  const c = new RecordCursor();
  const toConch = new StoredKafkaToConch();
  let offset = log.logStartOffset;
  for (;;) {
    const { records } = await log.read(offset, 1 << 20);
    if (records.length === 0) return { pairs, kafkaBatches };
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      if (isStoredKafkaBatch(records, at)) kafkaBatches++;
    }
    c.reset(toConch.convert(records));
    while (c.next()) {
      if (c.offset < offset) continue;
      offset = c.offset + 1;
      pairs.push(`${c.offset} ${c.key()?.toString()}=${c.valueNull ? "null" : c.value().toString()}`);
    }
  }
}

test("compaction of Kafka batches: keys read from the records, a batch kept whole while one record lives", async () => {
  await withTempDir(async (dir) => {
    const log = await Log.open(dir, compactConfig({ deleteRetentionMs: 1000 }));
    try {
      await log.append(
        kafkaBatch([
          ["a", "old a"],
          ["b", "kept b"],
        ]),
      ); // 0-1: b stays, so a does too
      await log.append(
        kafkaBatch(
          [
            ["c", "old c"],
            ["d", "old d"],
          ],
          true,
        ),
      ); // 2-3: both superseded
      for (let i = 0; i < 20; i++) {
        await log.append(
          kafkaBatch(
            [
              ["a", `new a ${i}`],
              ["c", `new c ${i}`],
              ["d", `new d ${i}`],
            ],
            i % 2 === 0,
          ),
        );
      }
      const before = await readBack(log);
      await log.compact(T0 + 10_000);
      const after = await readBack(log);
      assert.ok(
        after.kafkaBatches > 0 && after.kafkaBatches < before.kafkaBatches,
        "batches stay Kafka batches",
      );
      assert.deepEqual(after.pairs.slice(0, 2), ["0 a=old a", "1 b=kept b"]);
      assert.ok(
        !after.pairs.some((p) => p.startsWith("2 ") || p.startsWith("3 ")),
        "the superseded gzip batch went whole",
      );
      assert.ok(after.pairs.length < before.pairs.length);
      assert.equal(after.pairs.at(-1), before.pairs.at(-1));
      // Every record that stayed reads back as it was written.
      const all = new Set(before.pairs);
      for (const p of after.pairs) assert.ok(all.has(p), p);
    } finally {
      await log.close();
    }
  });
});

test("a compacted log refuses a Kafka batch with a keyless record, and stores one with keys", async () => {
  await withTempDir(async (dir) => {
    const log = await Log.open(dir, compactConfig());
    try {
      for (const gzip of [false, true]) {
        await assert.rejects(
          log.append(
            kafkaBatch(
              [
                ["k", "v"],
                [null, "keyless"],
              ],
              gzip,
            ),
          ),
          (e: unknown) => (e as { code?: number }).code === ErrorCode.INVALID_BATCH,
        );
      }
      await log.append(
        kafkaBatch([
          ["k", "v"],
          ["", "empty key"],
        ]),
      );
      assert.equal(log.logEndOffset, 2);
    } finally {
      await log.close();
    }
  });
});

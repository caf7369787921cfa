/**
 * Kafka batches stored as is (attribute bit 4), fuzzed: any Kafka batch the listener accepts,
 * gzip-compressed or not, is a batch checkBatch accepts once enveloped, reads back through
 * StoredKafkaToConch as the same records (keys, values, nulls, headers, timestamps, offsets), and a
 * change to any one of its bytes is caught by checkBatch, which never throws on what it is given.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { stampBaseOffset } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { envelopedSize, envelopeKafkaBatch } from "../../src/format/kafka/kafka-envelope.js";
import { MaxTimestampRepairs } from "../../src/format/kafka/max-timestamp-repairs.js";
import {
  ATTRIBUTES_AT,
  BASE_TIMESTAMP_AT,
  CRC_AT,
  MAX_TIMESTAMP_AT,
  RECORDS_AT,
  recordBatchCrc,
} from "../../src/format/kafka/record-batch.js";
import { RecordBatchCursor } from "../../src/format/kafka/record-batch-cursor.js";
import { StoredKafkaToConch } from "../../src/format/kafka/stored-kafka.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { readHeaders } from "../../src/format/record-headers.js";
import { BatchStatus, checkBatch, validateBatches } from "../../src/format/validate.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";

const TS = 1_700_000_000_000;
const bytes = fc.option(fc.uint8Array({ maxLength: 24 }), { nil: null });
const record = fc.record({
  dt: fc.integer({ min: 0, max: 100_000 }),
  key: bytes,
  value: bytes,
  headers: fc.array(fc.tuple(fc.string({ maxLength: 8 }), bytes), { maxLength: 3 }), // keys: UTF-8 text
});
const batchArb = fc.record({
  records: fc.array(record, { minLength: 1, maxLength: 12 }),
  gzip: fc.boolean(),
});

type Rec = {
  dt: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: [string, Uint8Array | null][];
};

function kafkaBatch(records: Rec[], gzip: boolean): Buffer {
  const b = new RecordBatchBuilder();
  for (const r of records) {
    const headers: (Buffer | null)[] = [];
    for (const [k, v] of r.headers) headers.push(Buffer.from(k), v === null ? null : Buffer.from(v));
    b.add(TS + r.dt, r.key && Buffer.from(r.key), r.value && Buffer.from(r.value), headers);
  }
  const batch = b.finish({ baseOffset: 0 });
  if (!gzip) return batch;
  const out = Buffer.concat([batch.subarray(0, RECORDS_AT), gzipSync(batch.subarray(RECORDS_AT))]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(1, ATTRIBUTES_AT);
  out.writeUInt32BE(recordBatchCrc(out, 0, out.length), CRC_AT);
  return out;
}

function enveloped(kafka: Buffer, maxTs: number, base: number): Buffer {
  const out = Buffer.alloc(envelopedSize(kafka.length));
  envelopeKafkaBatch(out, 0, kafka, 0, kafka.length, maxTs);
  stampBaseOffset(out, 0, base);
  return out;
}

/** The records as text, from a Conch walk. */
function conchRecords(stored: Buffer): string[] {
  const out: string[] = [];
  const c = new RecordCursor(new StoredKafkaToConch().convert(stored));
  while (c.next()) {
    const h = readHeaders(c.buffer, c.headersStart, c.headersEnd).map(
      (x) => `${Buffer.from(x.key).toString("hex")}=${x.value === null ? "null" : x.value.toString("hex")}`,
    );
    out.push(
      `${c.offset} ${c.timestampMs} ${c.key()?.toString("hex") ?? "null"} ${c.valueNull ? "null" : c.value().toString("hex")} ${h}`,
    );
  }
  return out;
}

test("stored Kafka batches: checked whole, read back as the same records through the Conch conversion", () => {
  fc.assert(
    fc.property(batchArb, fc.integer({ min: 0, max: 2 ** 40 }), ({ records, gzip }, base) => {
      const maxTs = TS + Math.max(...records.map((r) => r.dt));
      const stored = enveloped(kafkaBatch(records, gzip), maxTs, base);
      assert.equal(checkBatch(stored, 0, stored.length, 1 << 20), stored.length);
      const expected = records.map((r, i) => {
        const h = r.headers.map(
          ([k, v]) =>
            `${Buffer.from(k).toString("hex")}=${v === null ? "null" : Buffer.from(v).toString("hex")}`,
        );
        const key = r.key === null ? "null" : Buffer.from(r.key).toString("hex");
        const value = r.value === null ? "null" : Buffer.from(r.value).toString("hex");
        return `${base + i} ${TS + r.dt} ${key} ${value} ${h}`;
      });
      assert.deepEqual(conchRecords(stored), expected);
      // The Kafka bytes past the envelope are the batch as sent, base offset stamped.
      const c = new RecordBatchCursor(stored.subarray(49));
      assert.ok(c.nextBatch());
      assert.equal(c.baseOffset, base);
    }),
    { numRuns: 300 },
  );
});

test("stored Kafka batches: a change to any byte outside the base offsets is caught, and checkBatch never throws", () => {
  fc.assert(
    fc.property(batchArb, fc.nat(), fc.integer({ min: 1, max: 255 }), ({ records, gzip }, where, xor) => {
      const maxTs = TS + Math.max(...records.map((r) => r.dt));
      const stored = enveloped(kafkaBatch(records, gzip), maxTs, 7);
      const i = where % stored.length;
      const damaged = Buffer.from(stored);
      damaged[i]! ^= xor;
      // Outside the base offsets a CRC covers the byte; in them, the two must agree (rule K2) or
      // the changed one is out of range.
      const status = checkBatch(damaged, 0, damaged.length, 1 << 20);
      assert.ok(status < 0, `byte ${i} changed and the batch still passed`);
      // Truncated anywhere: a status, never a throw.
      const cut = where % stored.length;
      assert.ok(checkBatch(stored, 0, cut, 1 << 20) < 0);
    }),
    { numRuns: 1000 },
  );
});

test("stored Kafka batches: rule K6, an uncompressed batch's envelope timestamp is its largest record timestamp, none before 1970", () => {
  const records: Rec[] = [
    { dt: 0, key: null, value: null, headers: [] },
    { dt: 9, key: null, value: null, headers: [] },
    { dt: 5, key: null, value: null, headers: [] },
  ];
  const kafka = kafkaBatch(records, false);
  const good = enveloped(kafka, TS + 9, 3);
  assert.equal(checkBatch(good, 0, good.length, 1 << 20), good.length);
  // The listener takes the envelope's timestamp from the header's max_timestamp unwalked: a header
  // that says more or less than the records is caught by the log's one walk, with a status of its
  // own. Outside a produce it is refused; a produce's validateBatches notes it with the records'
  // largest, and the log sets it right in its copy: then it is the right batch, byte for byte.
  const isInvalidBatch = (err: unknown) => err instanceof ConchError && err.code === ErrorCode.INVALID_BATCH;
  const repairs = new MaxTimestampRepairs();
  for (const ts of [TS + 10, TS + 8, TS, 0]) {
    const header = Buffer.from(kafka);
    header.writeBigInt64BE(BigInt(ts), MAX_TIMESTAMP_AT);
    header.writeUInt32BE(recordBatchCrc(header, 0, header.length), CRC_AT);
    const wrong = enveloped(header, ts, 3);
    assert.equal(
      checkBatch(wrong, 0, wrong.length, 1 << 20),
      BatchStatus.KAFKA_MAX_TIMESTAMP,
      `envelope ${ts}`,
    );
    assert.throws(() => validateBatches(wrong, 1 << 20), isInvalidBatch);
    const appended = Buffer.concat([good, wrong, good]);
    assert.deepEqual(validateBatches(appended, 1 << 20, repairs), { batches: 3, records: 9 });
    assert.equal(repairs.count, 1);
    const copy = Buffer.concat([Buffer.alloc(7), appended]);
    repairs.applyTo(copy, 7);
    assert.deepEqual(copy.subarray(7), Buffer.concat([good, good, good]), `envelope ${ts}, set right`);
  }
  // The records' largest past the stored format's range, under a max_timestamp within it: refused.
  const late = Buffer.from(kafka);
  late.writeBigInt64BE(BigInt(2 ** 42 - 5), BASE_TIMESTAMP_AT);
  late.writeBigInt64BE(BigInt(2 ** 42 - 1), MAX_TIMESTAMP_AT);
  late.writeUInt32BE(recordBatchCrc(late, 0, late.length), CRC_AT);
  const past = enveloped(late, 2 ** 42 - 1, 3);
  assert.equal(checkBatch(past, 0, past.length, 1 << 20), BatchStatus.KAFKA_MAX_TIMESTAMP);
  assert.throws(() => validateBatches(past, 1 << 20, repairs), isInvalidBatch);
  // A record before 1970: base_timestamp 3, deltas 0, 9 and -10 for 5 (CRC32C recomputed).
  const early = Buffer.from(kafka);
  early.writeBigInt64BE(3n, BASE_TIMESTAMP_AT);
  // The last record ends: ts delta, offset delta, key -1, value -1, header count, one byte each.
  const last = early.length - 5;
  assert.equal(early[last], 10); // zigzag(5)
  early[last] = 19; // zigzag(-10)
  early.writeUInt32BE(recordBatchCrc(early, 0, early.length), CRC_AT);
  const stored = enveloped(early, 12, 3);
  assert.equal(checkBatch(stored, 0, stored.length, 1 << 20), BatchStatus.BAD_TIMESTAMP);
  assert.throws(
    () => validateBatches(stored, 1 << 20),
    (err) => err instanceof ConchError && err.code === ErrorCode.INVALID_BATCH,
  );
  // A compressed batch's records are opaque here: checked by the listener when it was stored.
  const gz = enveloped(kafkaBatch(records, true), TS + 9, 3);
  assert.equal(checkBatch(gz, 0, gz.length, 1 << 20), gz.length);
});

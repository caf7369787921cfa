/**
 * Records cross between Conch's format and Kafka's RecordBatch v2 (src/kafka/protocol) byte for
 * byte: keys and values (null, empty or bytes), headers (order, repeats, null values) and ms
 * timestamps. A Kafka batch converted to Conch and back is the same bytes, and so is a Conch batch
 * converted to Kafka and back: what the Kafka listener will do on its crossing paths.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BatchBuilder,
  checkBatch,
  HeaderCursor,
  MAX_TIMESTAMP_MS,
  RecordCursor,
} from "../../src/format/index.js";
import { RecordBatchCursor } from "../../src/format/kafka/record-batch-cursor.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";

interface Rec {
  timestampMs: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** Flat key, value, key, value (keys never null), as RecordBatchBuilder takes them. */
  headers: (Uint8Array | null)[];
}

const bytes = fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ maxLength: 40 }));
const nullable = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: bytes });
const headerKey = fc
  .oneof(fc.constantFrom("a", "trace-id", ""), fc.string({ maxLength: 6 }))
  .map((s) => Buffer.from(s));
const rec: fc.Arbitrary<Rec> = fc.record({
  timestampMs: fc.integer({ min: 0, max: MAX_TIMESTAMP_MS }),
  key: nullable,
  value: nullable,
  headers: fc.array(fc.tuple(headerKey, nullable), { maxLength: 4 }).map((hs) => hs.flat()),
});

function toKafka(records: readonly Rec[]): Buffer {
  const b = new RecordBatchBuilder();
  for (const r of records) b.add(r.timestampMs, r.key, r.value, r.headers);
  return b.finish({ baseOffset: 0 });
}

function toConch(records: readonly Rec[]): Buffer {
  const b = new BatchBuilder();
  for (const r of records) b.add(r.value, r.key, r.timestampMs, pairs(r.headers));
  return Buffer.from(b.finish());
}

function pairs(flat: readonly (Uint8Array | null)[]): [Uint8Array, Uint8Array | null][] | null {
  if (flat.length === 0) return null;
  const out: [Uint8Array, Uint8Array | null][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

/** The records of a Conch batch, read in place, as byte views. */
function readConch(batch: Buffer): Rec[] {
  assert.equal(checkBatch(batch, 0, batch.length, 1 << 30), batch.length);
  const c = new RecordCursor(batch);
  const h = new HeaderCursor();
  const out: Rec[] = [];
  while (c.next()) {
    const headers: (Uint8Array | null)[] = [];
    for (c.headers(h); h.next(); ) headers.push(batch.subarray(h.keyStart, h.keyEnd), h.value());
    out.push({ timestampMs: c.timestampMs, key: c.key(), value: c.valueNull ? null : c.value(), headers });
  }
  return out;
}

/** The records of a Kafka batch, read in place (CRC checked by the cursor). */
function readKafka(batch: Buffer): Rec[] {
  const c = new RecordBatchCursor(batch);
  const out: Rec[] = [];
  while (c.nextBatch()) {
    while (c.nextRecord()) {
      const headers: (Uint8Array | null)[] = [];
      while (c.nextHeader()) headers.push(batch.subarray(c.headerKeyStart, c.headerKeyEnd), c.headerValue());
      out.push({ timestampMs: c.timestamp, key: c.key(), value: c.value(), headers });
    }
  }
  return out;
}

/** Comparable form: bytes as hex, null as null. */
function plain(records: readonly Rec[]) {
  const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("hex"));
  return records.map((r) => ({ ...r, key: hex(r.key), value: hex(r.value), headers: r.headers.map(hex) }));
}

test("Kafka -> Conch -> Kafka and Conch -> Kafka -> Conch give back the same bytes", () => {
  fc.assert(
    fc.property(fc.array(rec, { minLength: 1, maxLength: 12 }), (records) => {
      const kafka = toKafka(records);
      const conch = toConch(records);
      // Each side reads back what was given.
      assert.deepEqual(plain(readKafka(kafka)), plain(records));
      assert.deepEqual(plain(readConch(conch)), plain(records));
      // Crossing over and back is byte for byte.
      assert.equal(toKafka(readConch(toConch(readKafka(kafka)))).toString("hex"), kafka.toString("hex"));
      assert.equal(toConch(readKafka(toKafka(readConch(conch)))).toString("hex"), conch.toString("hex"));
    }),
    { numRuns: 300 },
  );
});

test("a null key, an empty key, a null value and an empty value stay four different things", () => {
  const records: Rec[] = [
    { timestampMs: 1, key: null, value: Buffer.from("v"), headers: [] },
    { timestampMs: 2, key: Buffer.alloc(0), value: Buffer.from("v"), headers: [] },
    { timestampMs: 3, key: Buffer.from("k"), value: null, headers: [] },
    { timestampMs: 4, key: Buffer.from("k"), value: Buffer.alloc(0), headers: [] },
  ];
  const back = readKafka(toKafka(readConch(toConch(records))));
  assert.deepEqual(plain(back), plain(records));
  assert.deepEqual(
    back.map((r) => [r.key === null, r.key?.length, r.value === null, r.value?.length]),
    [
      [true, undefined, false, 1],
      [false, 0, false, 1],
      [false, 1, true, undefined],
      [false, 1, false, 0],
    ],
  );
});

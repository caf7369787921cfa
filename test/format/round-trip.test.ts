/**
 * Round trips, example-based and property-based: BatchBuilder -> validateBatches / checkBatch ->
 * stampBaseOffset -> RecordCursor gives back every key, value, header, timestamp and offset, null
 * and empty keys and values told apart, in whichever layout the builder picked.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BatchBuilder,
  type Bytes,
  batchBaseOffset,
  batchCount,
  batchLastOffset,
  batchTimestampMs,
  checkBatch,
  MAX_OFFSET,
  MAX_TIMESTAMP_MS,
  RecordCursor,
  type RecordHeader,
  type RecordHeaders,
  readHeaders,
  recordSize,
  stampBaseOffset,
  validateBatches,
} from "../../src/format/index.js";
import { bytesOf, refBatchCrc, type TestRecord } from "./helpers.js";

const MAX = 64 << 20;

const bytes: fc.Arbitrary<Bytes> = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.uint8Array({ maxLength: 64 }),
  fc.constant(new Uint8Array(0)),
);
const key: fc.Arbitrary<Bytes | null> = fc.oneof(fc.constant(null), fc.constant(""), bytes);
const value: fc.Arbitrary<Bytes | null> = fc.oneof(
  { weight: 4, arbitrary: bytes },
  { weight: 1, arbitrary: fc.constant(null) },
);
const headerKey = fc.oneof(
  fc.constantFrom("a", "trace-id", ""),
  fc.string({ unit: "grapheme", maxLength: 8 }),
);
const headerValue: fc.Arbitrary<Bytes | null> = fc.oneof(fc.constant(null), bytes);
/** Headers as pairs (repeats likely, from the small key set) or as an object; mostly none. */
const headers: fc.Arbitrary<RecordHeaders | null> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.array(fc.tuple(headerKey, headerValue), { maxLength: 6 }) },
  { weight: 1, arbitrary: fc.dictionary(headerKey, headerValue, { maxKeys: 4 }) },
);
const timestampMs = fc.oneof(
  fc.constantFrom(0, 1, 2 ** 32, 1_700_000_000_000, MAX_TIMESTAMP_MS),
  fc
    .tuple(fc.integer({ min: 0, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 2 ** 21 - 1 }))
    .map(([hi, lo]) => hi * 2 ** 21 + lo),
);
/** Plain records (the v1 layout) and, less often, records that need the extended one. */
const record: fc.Arbitrary<TestRecord> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ value: bytes, key: fc.oneof(fc.constant(null), bytes), timestampMs }) },
  { weight: 1, arbitrary: fc.record({ value, key, timestampMs, headers }) },
);
/** 1..500 records, mostly small batches so that many runs stay quick. */
const batchRecords = fc.oneof(
  { weight: 4, arbitrary: fc.array(record, { minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.array(record, { minLength: 1, maxLength: 500 }) },
);
const baseOffset = fc.oneof(
  fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32),
  fc.maxSafeNat().map((n) => Math.min(n, MAX_OFFSET - 1000)),
);

/**
 * What a record's headers read back as. A null key or value is null, an empty one empty, except
 * that a v1 batch cannot hold an empty key or a key with an empty value: the builder must have
 * chosen the extended layout for those, so they read back as given too.
 */
function expectedHeaders(h: RecordHeaders | null | undefined): RecordHeader[] {
  if (h === null || h === undefined) return [];
  const pairs = Array.isArray(h)
    ? (h as ReadonlyArray<readonly [Bytes, Bytes | null]>)
    : Object.entries(h as Record<string, Bytes | null>);
  return pairs.map(([k, v]) => ({
    key: bytesOf(k).toString("utf8"),
    value: v === null ? null : bytesOf(v),
  }));
}

/** Asserts that `cursor`'s next `records.length` records are `records`, numbered from `base`. */
function expectRecords(cursor: RecordCursor, records: readonly TestRecord[], base: number): void {
  records.forEach((r, i) => {
    assert.ok(cursor.next(), `record ${i} is there`);
    assert.equal(cursor.offset, base + i);
    assert.equal(cursor.baseOffset, base);
    assert.equal(cursor.timestampMs, r.timestampMs);
    assert.deepEqual(cursor.key(), r.key === null ? null : bytesOf(r.key));
    assert.equal(cursor.keyNull, r.key === null);
    assert.deepEqual(cursor.value(), r.value === null ? Buffer.alloc(0) : bytesOf(r.value));
    assert.equal(cursor.valueNull, r.value === null);
    assert.equal(cursor.isTombstone, r.key !== null && r.value === null);
    assert.deepEqual(
      readHeaders(cursor.buffer, cursor.headersStart, cursor.headersEnd),
      expectedHeaders(r.headers),
    );
    assert.equal(cursor.hasHeaders, expectedHeaders(r.headers).length > 0);
  });
}

/** Whether a batch of `records` needs the extended layout. */
function needsExtension(records: readonly TestRecord[]): boolean {
  return records.some(
    (r) =>
      expectedHeaders(r.headers).length > 0 ||
      r.value === null ||
      (r.key !== null && (bytesOf(r.key).length === 0 || bytesOf(r.value).length === 0)),
  );
}

test("round trip: one batch, stamped, read back record by record", () => {
  const records: TestRecord[] = [
    { value: "first", key: null, timestampMs: 1_000 },
    { value: Buffer.from([0, 1, 2, 255]), key: "user-1", timestampMs: 3_000 },
    { value: null, key: "user-2", timestampMs: 2_000 },
    { value: "", key: "user-3", timestampMs: 2_000, headers: { "content-type": "text/plain", empty: null } },
    {
      value: "",
      key: "",
      timestampMs: 2_000,
      headers: [
        ["x", "1"],
        ["x", Buffer.from([0xff])],
      ],
    },
    { value: "😀 ok", key: Buffer.from("ключ"), timestampMs: 0 },
  ];
  const builder = new BatchBuilder();
  for (const r of records) builder.add(r.value, r.key, r.timestampMs, r.headers ?? null);
  assert.equal(builder.count, 6);
  const size = builder.sizeBytes;
  const batch = builder.finish();
  assert.equal(batch.length, size);
  assert.equal(builder.count, 0);
  assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
  assert.deepEqual(validateBatches(batch, MAX), { batches: 1, records: 6 });
  assert.equal(batch.readUInt16BE(33), 0x0008, "the extended layout");
  stampBaseOffset(batch, 0, 1_000_000);
  assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
  assert.equal(batchBaseOffset(batch, 0), 1_000_000);
  assert.equal(batchLastOffset(batch, 0), 1_000_005);
  assert.equal(batchCount(batch, 0), 6);
  assert.equal(batchTimestampMs(batch, 0), 3_000);
  assert.equal(recordSize(batch, 0), batch.length);
  const c = new RecordCursor(batch);
  expectRecords(c, records, 1_000_000);
  assert.equal(c.next(), false);
  assert.equal(c.next(), false, "stays at the end");
});

test("round trip, property: any keys, values, headers, nulls, timestamps, 1..500 records, any base offset", () => {
  fc.assert(
    fc.property(batchRecords, baseOffset, (records, base) => {
      const builder = new BatchBuilder();
      for (const r of records) builder.add(r.value, r.key, r.timestampMs, r.headers ?? null);
      const batch = builder.finish();
      assert.equal(batch.readUInt32BE(29), refBatchCrc(batch));
      assert.equal(batch.readUInt16BE(33), needsExtension(records) ? 0x0008 : 0, "the layout");
      assert.deepEqual(validateBatches(batch, MAX), { batches: 1, records: records.length });
      stampBaseOffset(batch, 0, base);
      assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
      assert.equal(batchTimestampMs(batch, 0), Math.max(...records.map((r) => r.timestampMs)));
      assert.equal(batchLastOffset(batch, 0), base + records.length - 1);
      const c = new RecordCursor(batch);
      expectRecords(c, records, base);
      assert.equal(c.next(), false);
    }),
    { numRuns: 150 },
  );
});

test("round trip, property: several batches in one buffer, stamped one after another", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(record, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 6 }),
      baseOffset,
      fc.integer({ min: 0, max: 600 }),
      (batches, base, slabBytes) => {
        const builder = new BatchBuilder({ slabBytes });
        const built = batches.map((records) => {
          for (const r of records) builder.add(r.value, r.key, r.timestampMs, r.headers ?? null);
          return builder.finish();
        });
        const all = Buffer.concat(built);
        const total = batches.reduce((n, b) => n + b.length, 0);
        assert.deepEqual(validateBatches(all, MAX), { batches: batches.length, records: total });
        // Stamp as the broker does: each batch's base offset follows the previous batch's last.
        let at = 0;
        let next = base;
        for (const records of batches) {
          stampBaseOffset(all, at, next);
          next += records.length;
          at += checkBatch(all, at, all.length, MAX);
        }
        assert.equal(at, all.length);
        const c = new RecordCursor(all);
        let expectedBase = base;
        for (const records of batches) {
          expectRecords(c, records, expectedBase);
          expectedBase += records.length;
        }
        assert.equal(c.next(), false);
      },
    ),
    { numRuns: 150 },
  );
});

test("stampBaseOffset writes 0..2^53-1 and refuses anything else", () => {
  const batch = Buffer.from(withOneRecord().finish());
  for (const bad of [-1, 0.5, MAX_OFFSET + 1, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) {
    const before = Buffer.from(batch);
    assert.throws(() => stampBaseOffset(batch, 0, bad), RangeError, String(bad));
    assert.deepEqual(batch, before, "nothing written");
  }
  stampBaseOffset(batch, 0, MAX_OFFSET);
  assert.equal(batch.readBigUInt64BE(9), 2n ** 53n - 1n);
  assert.equal(
    checkBatch(batch, 0, batch.length, MAX),
    batch.length,
    "a one-record batch may start at 2^53 - 1",
  );
});

function withOneRecord(): BatchBuilder {
  const b = new BatchBuilder();
  b.add("v", null, 1);
  return b;
}

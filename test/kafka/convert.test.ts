/**
 * The conversion between Kafka batches and Conch batches (src/kafka/convert/): one Kafka batch is
 * one Conch batch, one record one offset; keys, values (null and empty apart), headers and
 * timestamps byte for byte both ways.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { RecordBatchCursor } from "../../src/format/kafka/record-batch-cursor.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { readHeaders } from "../../src/format/record-headers.js";
import { ConvertingBatches } from "../../src/kafka/convert/converting-store.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";

interface Rec {
  key: Uint8Array | null;
  value: Uint8Array | null;
  ts: number;
  headers: [Uint8Array, Uint8Array | null][];
}

const bytesOrNull = (maxLength: number) => fc.option(fc.uint8Array({ maxLength }), { nil: null, freq: 4 });

/** Null, empty and binary keys and values; no headers, empty ones, null header values, repeats. */
const record: fc.Arbitrary<Rec> = fc.record({
  key: bytesOrNull(40),
  value: bytesOrNull(200),
  ts: fc.integer({ min: 0, max: 2 ** 42 - 1 }),
  headers: fc.oneof(
    fc.constant<[Uint8Array, Uint8Array | null][]>([]),
    fc.array(fc.tuple(fc.uint8Array({ maxLength: 12 }), bytesOrNull(20)), { maxLength: 4 }),
  ),
});

function kafkaBatches(batches: Rec[][]): Buffer {
  const b = new RecordBatchBuilder();
  return Buffer.concat(
    batches.map((recs) => {
      for (const r of recs) b.add(r.ts, r.key, r.value, r.headers.flat());
      return b.finish({ baseOffset: 0 });
    }),
  );
}

const view = (b: Uint8Array | null): Buffer | null => (b === null ? null : Buffer.from(b));

/** A Kafka record's headers as [key, value] pairs of buffers. */
function kafkaHeaders(k: RecordBatchCursor): [Buffer, Buffer | null][] {
  const out: [Buffer, Buffer | null][] = [];
  while (k.nextHeader()) out.push([k.buffer.subarray(k.headerKeyStart, k.headerKeyEnd), k.headerValue()]);
  return out;
}

/** Stamps consecutive base offsets into stored Conch batches from `base`, as the log does. */
function stamp(stored: Buffer, base: number): Buffer {
  const out = Buffer.from(stored);
  let at = 0;
  let next = base;
  while (at < out.length) {
    out.writeUInt32BE(0, at + 9);
    out.writeUInt32BE(next, at + 13);
    next += out.readUInt32BE(at + 25);
    at += 49 + out.readUInt32BE(at + 21);
  }
  return out;
}

test("kafka conversion: Kafka batches to Conch and back keep every key, value, header, timestamp and offset", () => {
  const conv = new ConvertingBatches();
  fc.assert(
    fc.property(
      fc.array(fc.array(record, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
      fc.nat(1_000_000),
      (batches, base) => {
        const stored = stamp(conv.fromKafka(kafkaBatches(batches), 1 << 20, 0), base);
        const conch = new RecordCursor(stored);
        const flat = batches.flat();
        for (let i = 0; i < flat.length; i++) {
          assert.ok(conch.next());
          const want = flat[i]!;
          assert.equal(conch.offset, base + i);
          assert.equal(conch.timestampMs, want.ts);
          assert.deepEqual(conch.key(), view(want.key));
          assert.equal(conch.valueNull, want.value === null);
          if (want.value !== null) assert.deepEqual(conch.value(), Buffer.from(want.value));
          assert.deepEqual(
            readHeaders(conch.buffer, conch.headersStart, conch.headersEnd).map((h) => [h.key, h.value]),
            want.headers.map(([hk, hv]) => [Buffer.from(hk).toString(), view(hv)]),
          );
        }
        assert.equal(conch.next(), false);
        const back = conv.toKafka(stored);
        const k = new RecordBatchCursor(back);
        let i = 0;
        let batchCount = 0;
        while (k.nextBatch()) {
          assert.equal(k.recordCount, batches[batchCount]!.length, "one Kafka batch per Conch batch");
          batchCount++;
          while (k.nextRecord()) {
            const want = flat[i]!;
            assert.equal(k.offset, base + i);
            assert.equal(k.timestamp, want.ts);
            assert.deepEqual(k.key(), view(want.key));
            assert.deepEqual(k.value(), view(want.value));
            assert.deepEqual(
              kafkaHeaders(k),
              want.headers.map(([hk, hv]) => [Buffer.from(hk), view(hv)]),
            );
            i++;
          }
        }
        assert.equal(i, flat.length);
        assert.equal(batchCount, batches.length);
      },
    ),
    { numRuns: 200 },
  );
});

test("kafka conversion: a record without a timestamp (-1) takes the broker's time", () => {
  const b = new RecordBatchBuilder();
  b.add(-1, null, Buffer.from("v"));
  const stored = new ConvertingBatches().fromKafka(b.finish({ baseOffset: 0 }), 1 << 20, 1_234_567);
  const c = new RecordCursor(stored);
  assert.ok(c.next());
  assert.equal(c.timestampMs, 1_234_567);
});

test("kafka conversion: Conch batches to Kafka and back are the same bytes, layout included", () => {
  const conv = new ConvertingBatches();
  const builder = new BatchBuilder();
  fc.assert(
    fc.property(fc.array(record, { minLength: 1, maxLength: 8 }), (recs) => {
      for (const r of recs) builder.add(r.value, r.key, r.ts, r.headers);
      const stored = stamp(builder.finish(), 0);
      assert.deepEqual(stamp(conv.fromKafka(conv.toKafka(stored), 1 << 20, 0), 0), stored);
    }),
    { numRuns: 300 },
  );
});

test("kafka conversion: a tombstone (null value) and an empty value stay apart, as do a null and an empty key", () => {
  const conv = new ConvertingBatches();
  const b = new RecordBatchBuilder();
  const k = Buffer.from("k");
  const empty = Buffer.alloc(0);
  b.add(1, k, null).add(2, k, empty).add(3, null, empty).add(4, empty, Buffer.from("v"));
  const c = new RecordCursor(conv.fromKafka(b.finish({ baseOffset: 0 }), 1 << 20, 0));
  const seen: [boolean, boolean, boolean][] = [];
  while (c.next()) seen.push([c.keyNull, c.isTombstone, c.valueNull]);
  assert.deepEqual(seen, [
    [false, true, true],
    [false, false, false],
    [true, false, false],
    [false, false, false],
  ]);
});

test("kafka conversion: a batch whose headers grow past maxBatchBytes once stored is refused as too large", () => {
  const b = new RecordBatchBuilder();
  // 200 headers of an empty key and a null value: 2 bytes each in Kafka, 8 in Conch.
  const headers: (Uint8Array | null)[] = [];
  for (let i = 0; i < 200; i++) headers.push(Buffer.alloc(0), null);
  const batch = b.add(1, null, Buffer.from("v"), headers).finish({ baseOffset: 0 });
  assert.ok(batch.length < 1000);
  assert.throws(
    () => new ConvertingBatches().fromKafka(batch, 1000, 0),
    (e: Error & { kafkaCode?: number }) => e.kafkaCode === 10,
  );
});

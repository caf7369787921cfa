/**
 * The conversion between Kafka batches and Conch batches (src/kafka/convert/): one Kafka batch is
 * one Conch batch, one record one offset, keys, values and timestamps byte for byte both ways.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { ConvertingBatches } from "../../src/kafka/convert/converting-store.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { RecordBatchCursor } from "../../src/kafka/protocol/record-batch-cursor.js";

interface Rec {
  key: Uint8Array | null;
  value: Uint8Array;
  ts: number;
}

const record = fc.record({
  key: fc.option(fc.uint8Array({ minLength: 1, maxLength: 40 }), { nil: null }),
  value: fc.uint8Array({ maxLength: 200 }),
  ts: fc.integer({ min: 0, max: 2 ** 42 - 1 }),
});

function kafkaBatches(batches: Rec[][]): Buffer {
  const b = new RecordBatchBuilder();
  return Buffer.concat(
    batches.map((recs) => {
      for (const r of recs) b.add(r.ts, r.key, r.value);
      return b.finish({ baseOffset: 0 });
    }),
  );
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

test("kafka conversion: Kafka batches to Conch and back keep every key, value, timestamp and offset", () => {
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
          assert.equal(conch.offset, base + i);
          assert.equal(conch.timestampMs, flat[i]!.ts);
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
            assert.deepEqual(k.key(), want.key === null ? null : Buffer.from(want.key));
            assert.deepEqual(k.value(), Buffer.from(want.value));
            assert.equal(k.headerCount, 0);
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

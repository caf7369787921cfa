/**
 * The read path's check of stored batches (storedBatchIntact): a batch as appended passes; a change
 * to any byte is caught but to a Conch batch's base offset (the reader lines that one up itself),
 * for Conch batches and stored Kafka batches alike, without walking the records.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { stampBaseOffset } from "../../src/format/batch-header.js";
import { envelopedSize, envelopeKafkaBatch } from "../../src/format/kafka/kafka-envelope.js";
import { OFFSET_AT } from "../../src/format/layout.js";
import { storedBatchIntact } from "../../src/format/stored-batch-intact.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";

const TS = 1_700_000_000_000;
const values = fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 8 });

function conchBatch(vs: Uint8Array[]): Buffer {
  const b = new BatchBuilder();
  for (const [i, v] of vs.entries()) b.add(Buffer.from(v), i % 2 === 0 ? null : Buffer.from("k"), TS + i);
  const batch = Buffer.from(b.finish());
  stampBaseOffset(batch, 0, 1234);
  return batch;
}

function kafkaStored(vs: Uint8Array[]): Buffer {
  const b = new RecordBatchBuilder();
  for (const [i, v] of vs.entries()) b.add(TS + i, null, Buffer.from(v));
  const kafka = b.finish({ baseOffset: 0 });
  const out = Buffer.alloc(envelopedSize(kafka.length));
  envelopeKafkaBatch(out, 0, kafka, 0, kafka.length, TS + vs.length - 1);
  stampBaseOffset(out, 0, 1234);
  return out;
}

// A stored Kafka batch's two base offsets must agree, so a change to either is caught as well.
for (const [kind, make, baseOffsetCovered] of [
  ["a Conch batch", conchBatch, false],
  ["a stored Kafka batch", kafkaStored, true],
] as const) {
  test(`storedBatchIntact: ${kind} as appended passes; any byte changed is caught, but a Conch base offset`, () => {
    fc.assert(
      fc.property(values, fc.nat(), fc.integer({ min: 1, max: 255 }), (vs, where, xor) => {
        const batch = make(vs);
        assert.ok(storedBatchIntact(batch, 0, batch.length));
        const i = where % batch.length;
        const damaged = Buffer.from(batch);
        damaged[i]! ^= xor;
        const passes = !baseOffsetCovered && i >= OFFSET_AT && i < OFFSET_AT + 8;
        assert.equal(storedBatchIntact(damaged, 0, damaged.length), passes, `byte ${i} changed`);
      }),
      { numRuns: 500 },
    );
  });
}

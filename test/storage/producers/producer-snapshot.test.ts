/** The producer snapshot's bytes (docs/format.md, "The producer snapshot"), decoded and re-encoded. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeProducerSnapshot,
  encodeProducerSnapshot,
} from "../../../src/storage/producers/producer-snapshot.js";
import { ProducerTable } from "../../../src/storage/producers/producer-table.js";
import { producerBatch } from "./producer-batches.js";

const GOLDEN = [
  "43505331", // magic "CPS1"
  "bf307961", // CRC32C of what follows
  "000000000000000c", // offset 12: every batch below it is in
  "00000001", // one producer
  "000000000000002a 0003 0001 0000018bcfe56800", // id 42, epoch 3, one batch, last use 1700000000000 ms
  "00000004 00000006 000000000000000a 000000000000000c", // sequences 4-6 at offsets 10-12
].join("");

test("golden: a producer snapshot", () => {
  const table = new ProducerTable({ expirationMs: 60_000, maxProducers: 10 });
  table.record(producerBatch(42, 3, 4, 3), 0, 10, 1_700_000_000_000);
  const bytes = encodeProducerSnapshot(table, 12);
  assert.equal(bytes.toString("hex"), GOLDEN.replaceAll(" ", ""));
  const decoded = decodeProducerSnapshot(bytes);
  assert.ok(decoded !== null);
  assert.equal(decoded.offset, 12);
  const again = new ProducerTable({ expirationMs: 60_000, maxProducers: 10 });
  for (const [id, entry] of decoded.producers) again.restore(id, entry);
  assert.deepEqual(encodeProducerSnapshot(again, 12), bytes);
});

test("a snapshot cut short or with a changed byte is refused", () => {
  const table = new ProducerTable({ expirationMs: 60_000, maxProducers: 10 });
  table.record(producerBatch(42, 3, 4, 3), 0, 10, 1_700_000_000_000);
  const bytes = encodeProducerSnapshot(table, 12);
  for (let n = 0; n < bytes.length; n++)
    assert.equal(decodeProducerSnapshot(bytes.subarray(0, n)), null, `${n} bytes`);
  for (let i = 0; i < bytes.length; i++) {
    const x = Buffer.from(bytes);
    x[i] = x[i]! ^ 0x10;
    assert.equal(decodeProducerSnapshot(x), null, `byte ${i}`);
  }
});

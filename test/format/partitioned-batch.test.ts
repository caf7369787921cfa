/**
 * Partitioned batches (attribute bit 5, docs/format.md): built with `addTo`, checked by
 * `checkPartitionedBatch` and never by `checkBatch`, and split into ordinary batches that hold each
 * partition's records in order, byte for byte, whatever the mix of partitions and layouts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BatchBuilder,
  type Bytes,
  checkBatch,
  checkPartitionedBatch,
  HeaderCursor,
  RecordCursor,
  type RecordHeaders,
  splitPartitionedBatch,
} from "../../src/format/index.js";
import { PartitionIndex } from "../../src/format/partition-index.js";
import { refBatchCrc, reseal, statusName } from "./helpers.js";

const MAX = 1 << 20;

interface Rec {
  partition: number;
  value: Bytes | null;
  key: Bytes | null;
  timestampMs: number;
  headers?: RecordHeaders | null;
}

function partitionedBatch(records: readonly Rec[]): Buffer {
  const b = new BatchBuilder({ partitioned: true, slabBytes: 4096 });
  for (const r of records) b.addTo(r.partition, r.value, r.key, r.timestampMs, r.headers ?? null);
  return Buffer.from(b.finish());
}

/** What a record reads back as: key, value (null or text) and headers, as comparable values. */
function readBack(
  batch: Buffer,
): Array<[string | null, string | null, number, Array<[string, string | null]>]> {
  const c = new RecordCursor(batch);
  const h = new HeaderCursor();
  const out: Array<[string | null, string | null, number, Array<[string, string | null]>]> = [];
  while (c.next()) {
    const headers: Array<[string, string | null]> = [];
    c.headers(h);
    while (h.next()) headers.push([h.key().toString(), h.value()?.toString() ?? null]);
    out.push([
      c.key()?.toString() ?? null,
      c.valueNull ? null : c.value().toString(),
      c.timestampMs,
      headers,
    ]);
  }
  return out;
}

const text = (b: Bytes | null) => (b === null ? null : typeof b === "string" ? b : Buffer.from(b).toString());

const mixed: Rec[] = [
  { partition: 7, value: "a", key: "k1", timestampMs: 1_700_000_000_005 },
  { partition: 0, value: "b", key: null, timestampMs: 1_700_000_000_001 },
  { partition: 7, value: "c", key: "k2", timestampMs: 1_700_000_000_003 },
  { partition: 4_000_000_000, value: "d", key: "k3", timestampMs: 1_700_000_000_009 },
  { partition: 0, value: "e", key: "k4", timestampMs: 1_700_000_000_002 },
];

test("a partitioned batch is checked as one and split by partition, in order of first appearance", () => {
  const batch = partitionedBatch(mixed);
  assert.equal(batch.readUInt16BE(33), 0x0020);
  assert.equal(checkPartitionedBatch(batch, 0, batch.length, MAX), batch.length);
  // Never an ordinary batch: storage and readers refuse it.
  assert.equal(statusName(checkBatch(batch, 0, batch.length, MAX)), "BAD_METADATA");
  const split = splitPartitionedBatch(batch, 0);
  assert.deepEqual(
    split.map((e) => e.partition),
    [7, 0, 4_000_000_000],
  );
  const expect = (p: number) =>
    mixed.filter((r) => r.partition === p).map((r) => [text(r.key), text(r.value), r.timestampMs, []]);
  for (const { partition, records: b } of split) {
    assert.equal(checkBatch(b, 0, b.length, MAX), b.length, `batch of partition ${partition}`);
    assert.equal(b.readUInt32BE(29), refBatchCrc(b));
    assert.deepEqual(readBack(b), expect(partition));
  }
  // The batch timestamp is the largest of the partition's records, not its last one's.
  assert.equal(Number(split[0]!.records.readBigUInt64BE(1) / 1_000_000n), 1_700_000_000_005);
  assert.equal(Number(split[1]!.records.readBigUInt64BE(1) / 1_000_000n), 1_700_000_000_002);
});

test("extended records (headers, null values and keys) keep their layout through the split", () => {
  const records: Rec[] = [
    {
      partition: 1,
      value: "v",
      key: "k",
      timestampMs: 5,
      headers: [
        ["h", "1"],
        ["h", null],
      ],
    },
    { partition: 2, value: "plain", key: null, timestampMs: 6 },
    { partition: 1, value: null, key: "gone", timestampMs: 7 },
    { partition: 2, value: "", key: "", timestampMs: 4 },
  ];
  const batch = partitionedBatch(records);
  assert.equal(batch.readUInt16BE(33), 0x0028);
  assert.equal(checkPartitionedBatch(batch, 0, batch.length, MAX), batch.length);
  const split = splitPartitionedBatch(batch, 0);
  assert.deepEqual(
    split.map((e) => e.partition),
    [1, 2],
  );
  for (const { records: b } of split) {
    assert.equal(b.readUInt16BE(33), 0x0008);
    assert.equal(checkBatch(b, 0, b.length, MAX), b.length);
  }
  assert.deepEqual(readBack(split[0]!.records), [
    [
      "k",
      "v",
      5,
      [
        ["h", "1"],
        ["h", null],
      ],
    ],
    ["gone", null, 7, []],
  ]);
  assert.deepEqual(readBack(split[1]!.records), [
    [null, "plain", 6, []],
    ["", "", 4, []],
  ]);
});

test("the checks of a partitioned batch: its own bit, no codec, no producer, base offset 0, a partition's high half 0", () => {
  const tampered = (mutate: (b: Buffer) => void) => {
    const b = partitionedBatch(mixed);
    mutate(b);
    reseal(b);
    return statusName(checkPartitionedBatch(b, 0, b.length, MAX));
  };
  assert.match(
    tampered(() => {}),
    /^size /,
  );
  assert.equal(
    tampered((b) => b.writeUInt16BE(0x0000, 33)),
    "BAD_METADATA",
  );
  assert.equal(
    tampered((b) => b.writeUInt16BE(0x0021, 33)),
    "BAD_METADATA",
  );
  assert.equal(
    tampered((b) => b.writeUInt16BE(0x0030, 33)),
    "BAD_METADATA",
  );
  assert.equal(
    tampered((b) => b.writeUInt16BE(0x0060, 33)),
    "BAD_METADATA",
  );
  assert.equal(
    tampered((b) => b.writeBigUInt64BE(42n, 37)),
    "BAD_METADATA",
  );
  assert.equal(
    tampered((b) => b.writeBigUInt64BE(3n, 9)),
    "BAD_OFFSET",
  );
  assert.equal(
    tampered((b) => b.writeUInt32BE(1, 49 + 9)),
    "BAD_RECORD",
  );
  assert.equal(
    tampered((b) => b.writeUInt32BE(9, 25)),
    "BAD_COUNT",
  );
  // An ordinary batch is not a partitioned one.
  const plain = new BatchBuilder();
  plain.add("x");
  const ordinary = Buffer.from(plain.finish());
  assert.equal(statusName(checkPartitionedBatch(ordinary, 0, ordinary.length, MAX)), "BAD_METADATA");
});

test("every single bit flipped in a partitioned batch is caught", () => {
  const batch = partitionedBatch(mixed.slice(0, 3));
  for (let bit = 0; bit < batch.length * 8; bit++) {
    const b = Buffer.from(batch);
    b[bit >> 3]! ^= 1 << (bit & 7);
    assert.ok(checkPartitionedBatch(b, 0, b.length, MAX) < 0, `bit ${bit} went unnoticed`);
  }
});

test("a partitioned builder takes records only through addTo, and plain builders never through it", () => {
  const b = new BatchBuilder({ partitioned: true });
  assert.throws(() => b.add("x"), TypeError);
  assert.throws(() => b.addFrom(Buffer.from("x"), 0, 0, 0, 1, 1), TypeError);
  assert.throws(() => b.setProducer(1, 0, 0), TypeError);
  assert.throws(() => b.addTo(-1, "x"), RangeError);
  assert.throws(() => b.addTo(2 ** 32, "x"), RangeError);
  assert.throws(() => b.addTo(1.5, "x"), RangeError);
  assert.equal(b.count, 0);
  assert.throws(() => new BatchBuilder().addTo(0, "x"), TypeError);
});

test("property: any records over any partitions split into batches that read back as each partition's records", () => {
  const bytes = fc.oneof(fc.constant(null), fc.string({ maxLength: 12 }));
  const header = fc.tuple(
    fc.string({ minLength: 0, maxLength: 4 }),
    fc.oneof(fc.constant(null), fc.string({ maxLength: 4 })),
  );
  const rec = fc.record({
    partition: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 0xffffffff })),
    value: bytes,
    key: bytes,
    timestampMs: fc.integer({ min: 0, max: 2 ** 42 - 1 }),
    headers: fc.oneof(fc.constant(null), fc.array(header, { minLength: 1, maxLength: 3 })),
  });
  fc.assert(
    fc.property(fc.array(rec, { minLength: 1, maxLength: 40 }), (records) => {
      const batch = partitionedBatch(records);
      assert.equal(checkPartitionedBatch(batch, 0, batch.length, MAX), batch.length);
      const split = splitPartitionedBatch(batch, 0);
      assert.deepEqual(
        split.map((e) => e.partition),
        [...new Set(records.map((r) => r.partition))],
      );
      let total = 0;
      for (const { partition, records: b } of split) {
        assert.equal(checkBatch(b, 0, b.length, MAX), b.length);
        const mine = records.filter((r) => r.partition === partition);
        const back = readBack(b);
        total += back.length;
        assert.deepEqual(
          back,
          mine.map((r) => [text(r.key), text(r.value), r.timestampMs, r.headers ?? []]),
        );
      }
      assert.equal(total, records.length);
    }),
    { numRuns: 300 },
  );
});

test("an index groups many partitions right, batch after batch of different sizes", () => {
  // Batches of a few to thousands of records, large and small in turn, over partition numbers
  // close together and far apart: each one's partitions in first-seen order, each with its records'
  // count, as a reference grouping finds them.
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.integer({ min: 1, max: 3000 }),
          fc.integer({ min: 1, max: 5000 }),
          fc.integer({ min: 0, max: 0xffffffff }),
        ),
        { minLength: 1, maxLength: 6 },
      ),
      (shapes) => {
        for (const [n, spread, seed] of shapes) {
          const records = Array.from({ length: n }, (_, i) => ({
            partition: (Math.imul(i + seed, 2654435761) >>> 0) % spread,
            value: null,
            key: null,
            timestampMs: 0,
          }));
          const batch = partitionedBatch(records);
          const index = new PartitionIndex(batch, 0);
          const expected = new Map<number, number>();
          for (const r of records) expected.set(r.partition, (expected.get(r.partition) ?? 0) + 1);
          assert.deepEqual(Array.from(index.partitions), [...expected.keys()]);
          assert.deepEqual(Array.from(index.counts), [...expected.values()]);
        }
      },
    ),
    { numRuns: 40 },
  );
});

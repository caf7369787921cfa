/**
 * RecordBatch v2: the batches real clients produced walk to the records they were given; what the
 * builder writes, the check passes and the cursor reads back; every kind of damage gets its status.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import * as k from "../../src/kafka/protocol/index.js";
import { parseKafkaFixtures } from "./fixtures/fixture-format.js";
import * as produce from "./fixtures/produce.js";

const produced = parseKafkaFixtures(produce.TEXT);

function recordsOf(name: string): Buffer {
  const frame = produced.get(name);
  assert.ok(frame, name);
  const req = k.decodeKafkaRequest(frame).request as k.ProduceRequest;
  const records = req.topics[0]?.partitions[0]?.records;
  assert.ok(records);
  return records;
}

interface Seen {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

function walk(buf: Buffer): Seen[] {
  const out: Seen[] = [];
  const c = new k.RecordBatchCursor(buf);
  while (c.nextBatch()) {
    while (c.nextRecord()) {
      const headers: [string, string | null][] = [];
      while (c.nextHeader()) headers.push([c.headerKey(), c.headerValue()?.toString() ?? null]);
      out.push({
        offset: c.offset,
        timestamp: c.timestamp,
        key: c.key()?.toString() ?? null,
        value: c.value()?.toString() ?? null,
        headers,
      });
    }
  }
  return out;
}

test("record batch: each client's produced batch holds the records it was given, headers included", () => {
  const first = { offset: 0, timestamp: 1_700_000_000_000, key: "k", value: "hi", headers: [["h", "v"]] };
  assert.deepEqual(walk(recordsOf("produce-v7-librdkafka-request")), [
    first,
    { offset: 1, timestamp: 1_700_000_000_001, key: null, value: "two", headers: [] },
  ]);
  assert.deepEqual(walk(recordsOf("produce-v7-kafka-python-request")), [first]);
  assert.deepEqual(walk(recordsOf("produce-v7-kafkajs-request")), [first]);
  const c = new k.RecordBatchCursor(recordsOf("produce-v7-librdkafka-request"));
  assert.ok(c.nextBatch());
  assert.equal(c.compression, k.Compression.NONE);
  assert.equal(c.recordCount, 2);
  assert.equal(c.maxTimestamp, 1_700_000_000_001);
  assert.equal(c.producerId, -1);
  assert.equal(c.isControl, false);
  assert.equal(c.isTransactional, false);
});

test("record batch: the builder writes what librdkafka writes for the same records", () => {
  const b = new k.RecordBatchBuilder();
  b.add(1_700_000_000_000, Buffer.from("k"), Buffer.from("hi"), [Buffer.from("h"), Buffer.from("v")]);
  const ours = b.finish({ baseOffset: 0, partitionLeaderEpoch: 0 });
  const kafkaPython = recordsOf("produce-v7-kafka-python-request");
  // kafka-python writes the same single record with producer id, epoch and sequence -1.
  assert.equal(ours.toString("hex"), kafkaPython.toString("hex"));
});

const record = fc.record({
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
  key: fc.option(fc.uint8Array({ maxLength: 20 })),
  value: fc.option(fc.uint8Array({ maxLength: 200 })),
  headers: fc.array(fc.tuple(fc.uint8Array({ maxLength: 8 }), fc.option(fc.uint8Array({ maxLength: 8 }))), {
    maxLength: 3,
  }),
});

test("record batch: builder, check and cursor agree on any records", () => {
  const b = new k.RecordBatchBuilder(64);
  fc.assert(
    fc.property(fc.array(record, { minLength: 1, maxLength: 20 }), fc.maxSafeInteger(), (records, base) => {
      for (const r of records) b.add(r.timestamp, r.key, r.value, r.headers.flat());
      const baseOffset = Math.max(0, base - records.length);
      const batch = b.finish({ baseOffset });
      assert.equal(k.checkRecordBatch(batch, 0, batch.length, batch.length), batch.length);
      const c = new k.RecordBatchCursor(batch);
      assert.ok(c.nextBatch());
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        assert.ok(c.nextRecord());
        assert.equal(c.offset, baseOffset + i);
        assert.equal(c.timestamp, r.timestamp);
        assert.deepEqual(c.key(), r.key === null ? null : Buffer.from(r.key));
        assert.deepEqual(c.value(), r.value === null ? null : Buffer.from(r.value));
        assert.equal(c.headerCount, r.headers.length);
        for (const [hk, hv] of r.headers) {
          assert.ok(c.nextHeader());
          assert.deepEqual(c.buffer.subarray(c.headerKeyStart, c.headerKeyEnd), Buffer.from(hk));
          assert.deepEqual(c.headerValue(), hv === null ? null : Buffer.from(hv));
        }
        assert.equal(c.nextHeader(), false);
      }
      assert.equal(c.nextRecord(), false);
      assert.equal(c.nextBatch(), false);
      assert.equal(c.maxTimestamp, Math.max(...records.map((r) => r.timestamp)));
    }),
  );
});

function sample(): Buffer {
  const b = new k.RecordBatchBuilder();
  b.add(1000, Buffer.from("a"), Buffer.from("one"));
  b.add(1001, null, Buffer.from("two"), [Buffer.from("h"), null]);
  return b.finish({ baseOffset: 7 });
}

function flip(b: Buffer, at: number, xor: number): void {
  b[at] = b[at]! ^ xor;
}

/** Damages a copy of the sample, fixes its CRC unless told not to, and returns its status. */
function statusAfter(damage: (b: Buffer) => void, fixCrc = true): number {
  const b = sample();
  damage(b);
  if (fixCrc) b.writeUInt32BE(k.recordBatchCrc(b, 0, b.length), k.CRC_AT);
  return k.checkRecordBatch(b, 0, b.length, 1 << 20);
}

test("record batch: every kind of damage is caught with its own status", () => {
  const S = k.RecordBatchStatus;
  const good = sample();
  assert.equal(k.checkRecordBatch(good, 0, good.length, 1 << 20), good.length);
  assert.equal(k.checkRecordBatch(good, 0, good.length - 1, 1 << 20), S.TRUNCATED);
  assert.equal(k.checkRecordBatch(good, 0, 60, 1 << 20), S.TRUNCATED);
  assert.equal(k.checkRecordBatch(good, 0, good.length, good.length - 1), S.TOO_LARGE);
  assert.equal(
    statusAfter((b) => (b[k.MAGIC_AT] = 1)),
    S.BAD_MAGIC,
  );
  assert.equal(
    statusAfter((b) => b.writeInt32BE(48, k.BATCH_LENGTH_AT)),
    S.BAD_LENGTH,
  );
  assert.equal(
    statusAfter((b) => flip(b, b.length - 1, 1), false),
    S.BAD_CRC,
  );
  assert.equal(
    statusAfter((b) => flip(b, k.BASE_TIMESTAMP_AT + 7, 1), false),
    S.BAD_CRC,
  );
  assert.equal(
    statusAfter((b) => b.writeInt16BE(0x80, k.ATTRIBUTES_AT)),
    S.BAD_ATTRIBUTES,
  );
  assert.equal(
    statusAfter((b) => b.writeInt16BE(5, k.ATTRIBUTES_AT)),
    S.BAD_ATTRIBUTES,
  );
  assert.equal(
    statusAfter((b) => b.writeInt32BE(3, k.RECORDS_COUNT_AT)),
    S.BAD_COUNT,
  );
  assert.equal(
    statusAfter((b) => {
      b.writeInt32BE(0, k.RECORDS_COUNT_AT);
      b.writeInt32BE(-1, k.LAST_OFFSET_DELTA_AT);
    }),
    S.BAD_OFFSET,
  );
  assert.equal(
    statusAfter((b) => {
      b.writeInt32BE(1, k.RECORDS_COUNT_AT);
      b.writeInt32BE(0, k.LAST_OFFSET_DELTA_AT);
    }),
    S.BAD_COUNT, // one record fewer than the bytes hold
  );
  assert.equal(
    statusAfter((b) => b.writeInt32BE(-1, k.BASE_OFFSET_AT)),
    S.BAD_OFFSET,
  );
  assert.equal(
    statusAfter((b) => b.writeInt32BE(0x0020_0000, k.BASE_OFFSET_AT)),
    S.BAD_OFFSET,
  );
  // The first record's offset delta (after its length and attributes and timestamp delta) made 1.
  assert.equal(
    statusAfter((b) => (b[k.RECORDS_AT + 3] = 2)),
    S.BAD_RECORD,
  );
  // The first record's length made one byte longer than it is.
  assert.equal(
    statusAfter((b) => (b[k.RECORDS_AT] = b[k.RECORDS_AT]! + 2)),
    S.BAD_RECORD,
  );
});

test("record batch: a compressed batch is identified by its codec and its records stay opaque", () => {
  for (const codec of [k.Compression.GZIP, k.Compression.SNAPPY, k.Compression.LZ4, k.Compression.ZSTD]) {
    const b = sample();
    b.writeInt16BE(codec, k.ATTRIBUTES_AT);
    b.fill(0xee, k.RECORDS_AT); // not records at all: never read
    b.writeUInt32BE(k.recordBatchCrc(b, 0, b.length), k.CRC_AT);
    assert.equal(k.checkRecordBatch(b, 0, b.length, 1 << 20), b.length);
    const c = new k.RecordBatchCursor(b);
    assert.ok(c.nextBatch());
    assert.equal(c.compression, codec);
    assert.equal(c.nextRecord(), false);
    assert.equal(c.nextBatch(), false);
  }
});

test("record batch: the cursor throws INVALID_BATCH on a damaged batch after the good ones", () => {
  const good = sample();
  const bad = sample();
  flip(bad, bad.length - 1, 1);
  const c = new k.RecordBatchCursor(Buffer.concat([good, bad]));
  assert.ok(c.nextBatch());
  assert.throws(
    () => c.nextBatch(),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH && /CRC32C/.test(e.message),
  );
});

test("record batch: random damage to any byte never throws, and never passes unless the CRC still holds", () => {
  const good = sample();
  fc.assert(
    fc.property(
      fc.nat(good.length - 1),
      fc.integer({ min: 1, max: 255 }),
      fc.boolean(),
      (at, xor, fixCrc) => {
        const status = statusAfter((b) => flip(b, at, xor), fixCrc);
        if (!fixCrc && at >= k.ATTRIBUTES_AT) assert.ok(status < 0, `byte ${at} ^ ${xor} passed`);
        if (status > 0) {
          const b = sample();
          flip(b, at, xor);
          if (fixCrc) b.writeUInt32BE(k.recordBatchCrc(b, 0, b.length), k.CRC_AT);
          // What passes the check walks without throwing.
          const c = new k.RecordBatchCursor(b);
          while (c.nextBatch()) while (c.nextRecord()) while (c.nextHeader());
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test("record batch: the in-place varint read takes one to five bytes and refuses more than 32 bits", () => {
  const read = (hex: string): number => {
    const b = Buffer.from(hex, "hex");
    return k.readVarint(b, 0, b.length);
  };
  assert.equal(read("00"), 0);
  assert.equal(read("01"), -1);
  assert.equal(read("7f"), -64);
  assert.equal(read("8001"), 64);
  assert.equal(read("feffffff0f"), 0x7fff_ffff);
  assert.equal(read("ffffffff0f"), -0x8000_0000);
  assert.equal(k.varintEnd, 5);
  assert.equal(read("ffffffff1f"), k.BAD);
  assert.equal(read("ffffffffff"), k.BAD);
  assert.equal(read("8080"), k.BAD);
  assert.equal(read(""), k.BAD);
  fc.assert(
    fc.property(fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }), (v) => {
      const sizer = new k.KafkaSizer();
      sizer.varint(v);
      const w = new k.KafkaWriter(sizer.size);
      w.varint(v);
      const b = w.finish();
      assert.equal(k.readVarint(b, 0, b.length), v);
      assert.equal(k.varintEnd, b.length);
    }),
  );
});

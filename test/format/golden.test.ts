/**
 * Golden byte fixtures of format version 1 and of its extended records, the same ones
 * docs/format.md shows. Each is written out field by field from the byte tables (its CRC computed
 * by the bitwise reference in helpers.ts, not by src/format), decoded field by field, and must be
 * exactly what BatchBuilder writes (but for the v1 tombstone, which the builder now writes in the
 * extended layout: the v1 bytes must still read back as one).
 * If one of these changes, the on-disk and wire format has changed: that needs a new magic byte.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BatchBuilder,
  batchBaseOffset,
  batchCount,
  batchCrc,
  batchLastOffset,
  batchTimestampMs,
  checkBatch,
  RecordCursor,
  type RecordHeader,
  readHeaders,
  recordSize,
  stampBaseOffset,
  validateBatches,
} from "../../src/format/index.js";
import { envelopeKafkaBatch } from "../../src/format/kafka/kafka-envelope.js";
import { StoredKafkaToConch } from "../../src/format/kafka/stored-kafka.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { docsFixtureBlocks, hex, refBatchCrc, refCrc32c } from "./helpers.js";

const T = 1_700_000_000_000; // 2023-11-14T22:13:20Z, 0x17979cfe362a0000 ns

/** One record, no key, value "hello", timestamp T. */
const ONE_RECORD = hex(`
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000014 | 00000022 | 00000001
  d7f72df9 | 0000 | 0000 | ffffffffffffffff | 00000000
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000000 | 00000005 | 00000001 | 68656c6c6f
`);

/**
 * Three records: key "k1" value "v1" at T; key "k2" with an empty value (a tombstone) at T+1;
 * key "ключ" (8 UTF-8 bytes) value "🐚 conch" (10 UTF-8 bytes) at T-1. The batch timestamp is
 * T+1, the second record's: the largest, not the last.
 */
const THREE_RECORDS = hex(`
  c1 | 17979cfe36394240 | 0000000000000000 | 00000014 | 0000006f | 00000003
  fee72169 | 0000 | 0000 | ffffffffffffffff | 00000000
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000002 | 00000002 | 00000001 | 6b31 | 7631
  c1 | 17979cfe36394240 | 0000000000000001 | 00000002 | 00000000 | 00000001 | 6b32
  c1 | 17979cfe361abdc0 | 0000000000000002 | 00000008 | 0000000a | 00000001 | d0bad0bbd18ed187 | f09f909a20636f6e6368
`);

/** The largest timestamp the API accepts, 2^42 - 1 ms = 4398046511103000000 ns; key "t", value 00 ff. */
const MAX_TIMESTAMP = hex(`
  c1 | 3d08fffffff0bdc0 | 0000000000000000 | 00000014 | 00000020 | 00000001
  360dcf72 | 0000 | 0000 | ffffffffffffffff | 00000000
  c1 | 3d08fffffff0bdc0 | 0000000000000000 | 00000001 | 00000002 | 00000001 | 74 | 00ff
`);

interface Expected {
  key: string | null;
  value: Buffer;
  timestampMs: number;
}

const fixtures: {
  name: string;
  bytes: Buffer;
  records: Expected[];
  batchTimestampMs: number;
  crc: number;
  /** Written by BatchBuilder before the extended layout; now decoded only. */
  legacy?: boolean;
}[] = [
  {
    name: "one record without a key",
    bytes: ONE_RECORD,
    records: [{ key: null, value: Buffer.from("hello"), timestampMs: T }],
    batchTimestampMs: T,
    crc: 0xd7f72df9,
  },
  {
    name: "three records with keys, an empty value and multi-byte UTF-8",
    bytes: THREE_RECORDS,
    records: [
      { key: "k1", value: Buffer.from("v1"), timestampMs: T },
      { key: "k2", value: Buffer.alloc(0), timestampMs: T + 1 },
      { key: "ключ", value: Buffer.from("🐚 conch"), timestampMs: T - 1 },
    ],
    batchTimestampMs: T + 1,
    crc: 0xfee72169,
    legacy: true,
  },
  {
    name: "the largest timestamp",
    bytes: MAX_TIMESTAMP,
    records: [{ key: "t", value: Buffer.from([0x00, 0xff]), timestampMs: 2 ** 42 - 1 }],
    batchTimestampMs: 2 ** 42 - 1,
    crc: 0x360dcf72,
  },
];

for (const f of fixtures) {
  test(`golden: ${f.name} decodes field by field`, () => {
    const b = f.bytes;
    assert.equal(b.length, 49 + 29 * f.records.length + tail(f), "header + metadata + framed records");
    // The 29-byte header, read with Node's own readers rather than src/format's.
    assert.equal(b[0], 0xc1, "magic");
    assert.equal(
      b.readBigUInt64BE(1),
      BigInt(f.batchTimestampMs) * 1_000_000n,
      "timestamp: max inner, in ns",
    );
    assert.equal(b.readBigUInt64BE(9), 0n, "base offset: 0 until the broker stamps it");
    assert.equal(b.readUInt32BE(17), 20, "key size: the metadata block");
    assert.equal(b.readUInt32BE(21), b.length - 49, "payload size: the inner records");
    assert.equal(b.readUInt32BE(25), f.records.length, "record count");
    // The 20-byte metadata block.
    assert.equal(b.readUInt32BE(29), f.crc, "crc");
    assert.equal(refBatchCrc(b), f.crc, "the fixture's CRC is the reference CRC32C of the covered bytes");
    assert.equal(b.readUInt16BE(33), 0, "attributes: no compression");
    assert.equal(b.readUInt16BE(35), 0, "reserved");
    assert.equal(b.readBigUInt64BE(37), 2n ** 64n - 1n, "producer id: none");
    assert.equal(b.readUInt32BE(45), 0, "base sequence");
    // The inner records.
    let p = 49;
    f.records.forEach((r, i) => {
      const key = r.key === null ? Buffer.alloc(0) : Buffer.from(r.key);
      assert.equal(b[p], 0xc1, `record ${i}: magic`);
      assert.equal(b.readBigUInt64BE(p + 1), BigInt(r.timestampMs) * 1_000_000n, `record ${i}: timestamp`);
      assert.equal(b.readBigUInt64BE(p + 9), BigInt(i), `record ${i}: offset delta`);
      assert.equal(b.readUInt32BE(p + 17), key.length, `record ${i}: key size`);
      assert.equal(b.readUInt32BE(p + 21), r.value.length, `record ${i}: payload size`);
      assert.equal(b.readUInt32BE(p + 25), 1, `record ${i}: count`);
      assert.deepEqual(b.subarray(p + 29, p + 29 + key.length), key, `record ${i}: key`);
      p += 29 + key.length;
      assert.deepEqual(b.subarray(p, p + r.value.length), r.value, `record ${i}: value`);
      p += r.value.length;
    });
    assert.equal(p, b.length, "the inner records fill the payload exactly");
  });

  test(`golden: ${f.name} is exactly what BatchBuilder writes`, { skip: f.legacy === true }, () => {
    const builder = new BatchBuilder();
    builder.add("some record that is cleared", "x", 1);
    builder.clear();
    for (const r of f.records) builder.add(r.value, r.key, r.timestampMs);
    const built = builder.finish();
    assert.equal(built.toString("hex"), f.bytes.toString("hex"));
    // Values given as strings encode to the same bytes as their UTF-8 Buffers (00 ff is not UTF-8).
    if (f.records.every((r) => Buffer.from(r.value.toString("utf8")).equals(r.value))) {
      const fromStrings = new BatchBuilder();
      for (const r of f.records) fromStrings.add(r.value.toString("utf8"), r.key, r.timestampMs);
      assert.equal(fromStrings.finish().toString("hex"), f.bytes.toString("hex"));
    }
    // Keys given as Buffers too.
    const fromBuffers = new BatchBuilder();
    for (const r of f.records)
      fromBuffers.add(r.value, r.key === null ? null : Buffer.from(r.key), r.timestampMs);
    assert.equal(fromBuffers.finish().toString("hex"), f.bytes.toString("hex"));
  });

  test(`golden: ${f.name} passes the checks and reads back through src/format`, () => {
    const b = Buffer.from(f.bytes);
    assert.equal(checkBatch(b, 0, b.length, b.length), b.length);
    assert.deepEqual(validateBatches(b, b.length), { batches: 1, records: f.records.length });
    assert.equal(batchCrc(b, 0, b.length), f.crc);
    assert.equal(recordSize(b, 0), b.length);
    assert.equal(batchCount(b, 0), f.records.length);
    assert.equal(batchTimestampMs(b, 0), f.batchTimestampMs);
    stampBaseOffset(b, 0, 42);
    assert.equal(b.readBigUInt64BE(9), 42n);
    assert.deepEqual(b.subarray(17), f.bytes.subarray(17), "stamping changes only bytes 9-16");
    assert.deepEqual(b.subarray(0, 9), f.bytes.subarray(0, 9));
    assert.equal(checkBatch(b, 0, b.length, b.length), b.length, "the CRC still holds after stamping");
    assert.equal(batchBaseOffset(b, 0), 42);
    assert.equal(batchLastOffset(b, 0), 42 + f.records.length - 1);
    const c = new RecordCursor(b);
    f.records.forEach((r, i) => {
      assert.ok(c.next());
      assert.equal(c.offset, 42 + i);
      assert.equal(c.baseOffset, 42);
      assert.equal(c.timestampMs, r.timestampMs);
      assert.equal(c.key()?.toString("utf8") ?? null, r.key);
      assert.deepEqual(c.value(), r.value);
      // A v1 record with a key and an empty value is the v1 tombstone: it reads as a null value.
      assert.equal(c.isTombstone, r.key !== null && r.value.length === 0);
      assert.equal(c.valueNull, c.isTombstone);
      assert.equal(c.hasHeaders, false);
    });
    assert.equal(c.next(), false);
  });
}

/** Bytes of keys and values, for the length check. */
function tail(f: { records: Expected[] }): number {
  return f.records.reduce((n, r) => n + (r.key === null ? 0 : Buffer.byteLength(r.key)) + r.value.length, 0);
}

/**
 * Extended layout: key "k1" value "v1" at T with headers trace-id=abc, flag=null, trace-id=""
 * (in that order, the key repeated); no key with an empty value at T+1; key "k2" with a null value
 * (a tombstone) at T-1; an empty key with value "x" at T.
 */
const EXTENDED = hex(`
  c1 | 17979cfe36394240 | 0000000000000000 | 00000014 | 000000ae | 00000004
  d2bc5e12 | 0008 | 0000 | ffffffffffffffff | 00000000
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000002 | 00000002 | 00000033 | 6b31 | 7631
     00000003 | 00000008 74726163652d6964 | 00000003 616263 | 00000004 666c6167 | ffffffff
     00000008 74726163652d6964 | 00000000
  c1 | 17979cfe36394240 | 0000000000000001 | ffffffff | 00000000 | 00000000
  c1 | 17979cfe361abdc0 | 0000000000000002 | 00000002 | ffffffff | 00000000 | 6b32
  c1 | 17979cfe362a0000 | 0000000000000003 | 00000000 | 00000001 | 00000000 | 78
`);

/**
 * Two plain records (key "a" value "1", no key value "2") then key "a" with a null value, all at T:
 * the builder starts in the v1 layout and switches the batch when the tombstone comes, so the
 * first two records say the same in the extended one (a null key is all ones, count 1 becomes 0).
 */
const SWITCHED = hex(`
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000014 | 0000005b | 00000003
  8d7f711a | 0008 | 0000 | ffffffffffffffff | 00000000
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000001 | 00000001 | 00000000 | 61 | 31
  c1 | 17979cfe362a0000 | 0000000000000001 | ffffffff | 00000001 | 00000000 | 32
  c1 | 17979cfe362a0000 | 0000000000000002 | 00000001 | ffffffff | 00000000 | 61
`);

interface ExpectedExtended {
  key: string | null;
  value: string | null;
  timestampMs: number;
  headers: [string, string | null][];
}

const extendedFixtures: {
  name: string;
  bytes: Buffer;
  records: ExpectedExtended[];
  batchTimestampMs: number;
  crc: number;
}[] = [
  {
    name: "extended: headers, null and empty keys, a null value",
    bytes: EXTENDED,
    records: [
      {
        key: "k1",
        value: "v1",
        timestampMs: T,
        headers: [
          ["trace-id", "abc"],
          ["flag", null],
          ["trace-id", ""],
        ],
      },
      { key: null, value: "", timestampMs: T + 1, headers: [] },
      { key: "k2", value: null, timestampMs: T - 1, headers: [] },
      { key: "", value: "x", timestampMs: T, headers: [] },
    ],
    batchTimestampMs: T + 1,
    crc: 0xd2bc5e12,
  },
  {
    name: "extended: a batch switched to the extended layout by a tombstone",
    bytes: SWITCHED,
    records: [
      { key: "a", value: "1", timestampMs: T, headers: [] },
      { key: null, value: "2", timestampMs: T, headers: [] },
      { key: "a", value: null, timestampMs: T, headers: [] },
    ],
    batchTimestampMs: T,
    crc: 0x8d7f711a,
  },
];

/** A size field's bytes: the all-ones null marker for null. */
function sized(b: Buffer | null): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt32BE(b === null ? 0xffffffff : b.length);
  return b === null ? size : Buffer.concat([size, b]);
}

/** The headers block as docs/format.md describes it, built with Node's own writers. */
function headersBlock(headers: [string, string | null][]): Buffer {
  if (headers.length === 0) return Buffer.alloc(0);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(headers.length);
  return Buffer.concat([
    count,
    ...headers.flatMap(([k, v]) => [sized(Buffer.from(k)), sized(v === null ? null : Buffer.from(v))]),
  ]);
}

for (const f of extendedFixtures) {
  const bytesOrNull = (s: string | null) => (s === null ? null : Buffer.from(s));

  test(`golden: ${f.name} decodes field by field`, () => {
    const b = f.bytes;
    assert.equal(b[0], 0xc1, "magic");
    assert.equal(b.readBigUInt64BE(1), BigInt(f.batchTimestampMs) * 1_000_000n, "timestamp");
    assert.equal(b.readUInt32BE(17), 20, "key size: the metadata block");
    assert.equal(b.readUInt32BE(21), b.length - 49, "payload size");
    assert.equal(b.readUInt32BE(25), f.records.length, "record count");
    assert.equal(b.readUInt32BE(29), f.crc, "crc");
    assert.equal(refBatchCrc(b), f.crc, "the fixture's CRC is the reference CRC32C of the covered bytes");
    assert.equal(b.readUInt16BE(33), 0x0008, "attributes: bit 3, the extended layout");
    let p = 49;
    f.records.forEach((r, i) => {
      const key = bytesOrNull(r.key);
      const value = bytesOrNull(r.value);
      const block = headersBlock(r.headers);
      assert.equal(b[p], 0xc1, `record ${i}: magic`);
      assert.equal(b.readBigUInt64BE(p + 1), BigInt(r.timestampMs) * 1_000_000n, `record ${i}: timestamp`);
      assert.equal(b.readBigUInt64BE(p + 9), BigInt(i), `record ${i}: offset delta`);
      assert.equal(b.readUInt32BE(p + 17), key === null ? 0xffffffff : key.length, `record ${i}: key size`);
      assert.equal(
        b.readUInt32BE(p + 21),
        value === null ? 0xffffffff : value.length,
        `record ${i}: value size`,
      );
      assert.equal(b.readUInt32BE(p + 25), block.length, `record ${i}: count is the headers block size`);
      p += 29;
      const body = Buffer.concat([key ?? Buffer.alloc(0), value ?? Buffer.alloc(0), block]);
      assert.deepEqual(b.subarray(p, p + body.length), body, `record ${i}: key, value, headers`);
      p += body.length;
    });
    assert.equal(p, b.length, "the inner records fill the payload exactly");
  });

  test(`golden: ${f.name} is exactly what BatchBuilder writes`, () => {
    const builder = new BatchBuilder();
    for (const r of f.records) {
      builder.add(bytesOrNull(r.value), r.key, r.timestampMs, r.headers.length === 0 ? null : r.headers);
    }
    assert.equal(builder.finish().toString("hex"), f.bytes.toString("hex"));
  });

  test(`golden: ${f.name} passes the checks and reads back through src/format`, () => {
    const b = Buffer.from(f.bytes);
    assert.equal(checkBatch(b, 0, b.length, b.length), b.length);
    stampBaseOffset(b, 0, 42);
    assert.equal(checkBatch(b, 0, b.length, b.length), b.length, "the CRC still holds after stamping");
    const c = new RecordCursor(b);
    f.records.forEach((r, i) => {
      assert.ok(c.next());
      assert.equal(c.offset, 42 + i);
      assert.equal(c.timestampMs, r.timestampMs);
      assert.equal(c.keyNull, r.key === null);
      assert.equal(c.key()?.toString("utf8") ?? null, r.key);
      assert.equal(c.valueNull, r.value === null);
      assert.equal(c.value().toString("utf8"), r.value ?? "");
      assert.equal(c.isTombstone, r.key !== null && r.value === null);
      const expected: RecordHeader[] = r.headers.map(([k, v]) => ({ key: k, value: bytesOrNull(v) }));
      assert.deepEqual(readHeaders(c.buffer, c.headersStart, c.headersEnd), expected);
      assert.equal(c.recordEnd, c.headersEnd);
    });
    assert.equal(c.next(), false);
  });
}

test("docs/format.md shows exactly these fixtures, in this order", () => {
  assert.deepEqual(
    docsFixtureBlocks("## Golden fixtures"),
    [...fixtures, ...extendedFixtures]
      .map((f) => f.bytes.toString("hex"))
      .concat(KAFKA_STORED.toString("hex")),
  );
});

/**
 * A Kafka RecordBatch v2 stored as is (attribute bit 4): one record, no key, value "hello" at T,
 * one header "h" with a null value, as RecordBatchBuilder (and kafka-python) write it, after its
 * envelope: timestamp T in ns, count 1, payload 76 bytes, reserved u16 = producer epoch -1,
 * producer id and base sequence -1 as in the Kafka header.
 */
const KAFKA_STORED = hex(`
  c1 | 17979cfe362a0000 | 0000000000000000 | 00000014 | 0000004c | 00000001
  2ef49d85 | 0010 | ffff | ffffffffffffffff | ffffffff
  0000000000000000 | 00000040 | ffffffff | 02 | ee19a643
  0000 | 00000000 | 0000018bcfe56800 | 0000018bcfe56800
  ffffffffffffffff | ffff | ffffffff | 00000001
  1c | 00 | 00 | 00 | 01 | 0a | 68656c6c6f | 02 | 02 | 68 | 01
`);

test("golden: a Kafka batch stored as is, its envelope CRC over the bytes Kafka's CRC leaves out", () => {
  const b = new RecordBatchBuilder();
  b.add(T, null, Buffer.from("hello"), [Buffer.from("h"), null]);
  const kafka = b.finish({ baseOffset: 0 });
  const written = Buffer.alloc(49 + kafka.length);
  envelopeKafkaBatch(written, 0, kafka, 0, kafka.length, T);
  assert.equal(written.toString("hex"), KAFKA_STORED.toString("hex"));
  assert.deepEqual(KAFKA_STORED.subarray(49), kafka, "the Kafka batch byte for byte");
  // The envelope CRC: envelope bytes 0-8, 17-28, 33-48, then the Kafka header's 8-20.
  const covered = Buffer.concat([
    KAFKA_STORED.subarray(0, 9),
    KAFKA_STORED.subarray(17, 29),
    KAFKA_STORED.subarray(33, 49),
    KAFKA_STORED.subarray(49 + 8, 49 + 21),
  ]);
  assert.equal(KAFKA_STORED.readUInt32BE(29), refCrc32c(covered));
  assert.equal(checkBatch(KAFKA_STORED, 0, KAFKA_STORED.length, 1 << 20), KAFKA_STORED.length);
  // Stamping 42 writes both base offsets and nothing else; every CRC still holds.
  const stamped = Buffer.from(KAFKA_STORED);
  stampBaseOffset(stamped, 0, 42);
  for (let i = 0; i < stamped.length; i++) {
    const inBase = (i >= 9 && i < 17) || (i >= 49 && i < 57);
    if (!inBase) assert.equal(stamped[i], KAFKA_STORED[i], `byte ${i}`);
  }
  assert.equal(stamped.readBigUInt64BE(9), 42n);
  assert.equal(stamped.readBigUInt64BE(49), 42n);
  assert.equal(checkBatch(stamped, 0, stamped.length, 1 << 20), stamped.length);
  const c = new RecordCursor(new StoredKafkaToConch().convert(stamped));
  assert.ok(c.next());
  assert.equal(c.offset, 42);
  assert.equal(c.timestampMs, T);
  assert.equal(c.keyNull, true);
  assert.equal(c.value().toString(), "hello");
  assert.deepEqual(readHeaders(c.buffer, c.headersStart, c.headersEnd), [{ key: "h", value: null }]);
  assert.equal(c.next(), false);
});

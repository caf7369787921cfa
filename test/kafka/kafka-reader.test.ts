/**
 * The Kafka primitives: what the writer writes the reader reads back, and every malformed input is
 * one typed error (ConchError MALFORMED_REQUEST) raised before anything is sized from it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { KafkaReader, type KafkaSink, KafkaSizer, KafkaWriter } from "../../src/kafka/protocol/index.js";

function encode(write: (w: KafkaSink) => void): Buffer {
  const sizer = new KafkaSizer();
  write(sizer);
  const w = new KafkaWriter(sizer.size);
  write(w);
  return w.finish();
}

function malformed(f: () => unknown, why?: RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof ConchError, `a ConchError, not ${String(e)}`);
    assert.equal(e.code, ErrorCode.MALFORMED_REQUEST);
    if (why) assert.match(e.message, why);
    return true;
  });
}

test("kafka primitives: every type round-trips through the sizer, the writer and the reader", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -128, max: 127 }),
      fc.integer({ min: -0x8000, max: 0x7fff }),
      fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }),
      fc.maxSafeInteger(),
      fc.integer({ min: -(2 ** 52), max: 2 ** 52 - 1 }),
      fc.option(fc.string({ maxLength: 40 })),
      fc.option(fc.uint8Array({ maxLength: 40 })),
      (i8, i16, i32, i64, varlong, s, b) => {
        const buf = encode((w) => {
          w.int8(i8);
          w.int16(i16);
          w.int32(i32);
          w.int64(i64);
          w.varint(i32);
          w.varlong(varlong);
          w.uvarint(i32 >>> 0);
          w.nullableString(s);
          w.compactNullableString(s);
          w.nullableBytes(b);
          w.compactBytes(b ?? new Uint8Array(0));
          w.arrayCount(b === null ? -1 : 3);
          w.compactArrayCount(b === null ? -1 : 3);
          w.emptyTaggedFields();
        });
        const r = new KafkaReader(buf);
        assert.equal(r.int8(), i8);
        assert.equal(r.int16(), i16);
        assert.equal(r.int32(), i32);
        assert.equal(r.int64(), i64);
        assert.equal(r.varint(), i32);
        assert.equal(r.varlong(), varlong);
        assert.equal(r.uvarint(), i32 >>> 0);
        assert.equal(r.nullableString(), s);
        assert.equal(r.compactNullableString(), s);
        assert.deepEqual(r.nullableBytes(), b === null ? null : Buffer.from(b));
        assert.deepEqual(r.compactBytes(), Buffer.from(b ?? []));
        // A count is bounded by the bytes left: 3 elements of 1 byte fit only while 3 bytes are left.
        assert.equal(r.nullableArrayCount(0), b === null ? -1 : 3);
        if (b === null) assert.equal(r.uvarint(), 0);
        else assert.equal(r.compactArrayCount(0), 3);
        r.skipTaggedFields();
        r.done();
      },
    ),
  );
});

test("kafka primitives: varints match Kafka's encoding (zigzag, 7 bits a byte)", () => {
  assert.equal(encode((w) => w.varint(0)).toString("hex"), "00");
  assert.equal(encode((w) => w.varint(-1)).toString("hex"), "01");
  assert.equal(encode((w) => w.varint(1)).toString("hex"), "02");
  assert.equal(encode((w) => w.varint(-64)).toString("hex"), "7f");
  assert.equal(encode((w) => w.varint(64)).toString("hex"), "8001");
  assert.equal(encode((w) => w.varint(-0x8000_0000)).toString("hex"), "ffffffff0f");
  assert.equal(encode((w) => w.uvarint(300)).toString("hex"), "ac02");
  assert.equal(new KafkaReader(Buffer.from("ffffffff0f", "hex")).varint(), -0x8000_0000);
});

test("kafka primitives: a forged count is refused before anything is allocated", () => {
  // 2^31 - 1 elements claimed with four bytes left.
  malformed(() => new KafkaReader(Buffer.from("7fffffff00000000", "hex")).arrayCount(1), /exceeds the frame/);
  malformed(() => new KafkaReader(Buffer.from("80808080070000", "hex")).compactArrayCount(1), /exceeds/);
  malformed(() => new KafkaReader(Buffer.from("fffffffe", "hex")).nullableArrayCount(1), /array count -2/);
  malformed(() => new KafkaReader(Buffer.from("ffffffff", "hex")).arrayCount(1), /null where an array/);
  // Counts that would fit one byte per element but not the element's real minimum.
  malformed(() => new KafkaReader(Buffer.from("00000002000000", "hex")).arrayCount(2), /exceeds/);
});

test("kafka primitives: lengths past the end, negative lengths and nulls where none is allowed are malformed", () => {
  malformed(() => new KafkaReader(Buffer.from("0005616263", "hex")).string(), /past the end/);
  malformed(() => new KafkaReader(Buffer.from("fffe", "hex")).nullableString(), /string length -2/);
  malformed(() => new KafkaReader(Buffer.from("ffff", "hex")).string(), /null where a string/);
  malformed(() => new KafkaReader(Buffer.from("7fffffff00", "hex")).bytes(), /past the end/);
  malformed(() => new KafkaReader(Buffer.from("fffffff0", "hex")).nullableBytes(), /bytes length/);
  malformed(() => new KafkaReader(Buffer.from("00", "hex")).compactString(), /null where a compact string/);
  malformed(() => new KafkaReader(Buffer.from("05616263", "hex")).compactString(), /past the end/);
  malformed(() => new KafkaReader(Buffer.from("000102", "hex")).int32(), /int32 of 4 bytes past the end/);
});

test("kafka primitives: varints longer than their type and int64 values that are not exact numbers are malformed", () => {
  malformed(() => new KafkaReader(Buffer.from("ffffffff10", "hex")).uvarint(), /longer than 32 bits/);
  malformed(() => new KafkaReader(Buffer.from("ffffffffff01", "hex")).uvarint(), /longer than 32 bits/);
  malformed(() => new KafkaReader(Buffer.from("8080", "hex")).uvarint(), /past the end/);
  malformed(() => new KafkaReader(Buffer.from("ffffffffffffffff7f", "hex")).varlong(), /beyond/);
  malformed(() => new KafkaReader(Buffer.from("0020000000000000", "hex")).int64(), /beyond 2\^53/);
  malformed(() => new KafkaReader(Buffer.from("ffe0000000000000", "hex")).int64(), /beyond 2\^53/);
  assert.equal(new KafkaReader(Buffer.from("001fffffffffffff", "hex")).int64(), Number.MAX_SAFE_INTEGER);
  assert.equal(new KafkaReader(Buffer.from("ffe0000000000001", "hex")).int64(), -Number.MAX_SAFE_INTEGER);
  assert.equal(new KafkaReader(Buffer.from("ffffffffffffffff", "hex")).int64(), -1);
});

test("kafka primitives: tagged fields are skipped within bounds and in order", () => {
  const r = new KafkaReader(Buffer.from("02" + "00" + "02" + "abcd" + "05" + "01" + "ee" + "ff", "hex"));
  r.skipTaggedFields();
  assert.equal(r.remaining, 1);
  malformed(
    () => new KafkaReader(Buffer.from("01" + "00" + "05" + "abcd", "hex")).skipTaggedFields(),
    /past the end/,
  );
  malformed(
    () => new KafkaReader(Buffer.from("02" + "03" + "00" + "01" + "00", "hex")).skipTaggedFields(),
    /order/,
  );
  malformed(() => new KafkaReader(Buffer.from("7f00", "hex")).skipTaggedFields(), /exceeds the frame/);
});

test("kafka primitives: the writer refuses values that do not fit rather than wrapping them", () => {
  const refused = (f: (w: KafkaWriter) => void): void => {
    assert.throws(
      () => f(new KafkaWriter(16)),
      (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_REQUEST,
    );
  };
  refused((w) => w.int16(0x8000));
  refused((w) => w.int32(2 ** 31));
  refused((w) => w.int64(2 ** 53));
  refused((w) => w.int8(1.5));
  refused((w) => w.uvarint(-1));
  assert.throws(() => new KafkaSizer().string("x".repeat(0x8000)), /longer than 32767/);
});

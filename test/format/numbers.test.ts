/**
 * u64 and timestamp conversions against BigInt, which the code itself never uses: the numbers must
 * be exact where the format promises it (offsets below 2^53, integer milliseconds below 2^42).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  compareTimestamps,
  MAX_OFFSET,
  MAX_TIMESTAMP_MS,
  readTimestampMs,
  readU16,
  readU32,
  readU64,
  readU64Safe,
  writeTimestampMs,
  writeU16,
  writeU32,
  writeU64,
} from "../../src/format/index.js";

const U64_MAX = (1n << 64n) - 1n;
const NS_PER_MS = 1_000_000n;

function u64Bytes(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(v);
  return b;
}

/** Integer milliseconds in 0..2^42 - 1, with the edges drawn often. */
const timestampMs = fc.oneof(
  fc.constantFrom(0, 1, 999, 1000, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 1_700_000_000_000, MAX_TIMESTAMP_MS),
  fc
    .tuple(fc.integer({ min: 0, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 2 ** 21 - 1 }))
    .map(([hi, lo]) => hi * 2 ** 21 + lo),
);
const safeNat = fc.oneof(
  fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32, MAX_OFFSET - 1, MAX_OFFSET),
  fc.maxSafeNat(),
);
const anyU64 = fc.bigInt({ min: 0n, max: U64_MAX });

test("writeU64/readU64 round-trip every integer in 0..2^53-1 exactly, as BigInt would write it", () => {
  fc.assert(
    fc.property(safeNat, fc.integer({ min: 0, max: 8 }), (v, at) => {
      const buf = Buffer.alloc(16, 0xaa);
      writeU64(buf, at, v);
      assert.deepEqual(buf.subarray(at, at + 8), u64Bytes(BigInt(v)));
      assert.equal(buf[at - 1] ?? 0xaa, 0xaa, "no byte before the field is written");
      assert.equal(buf[at + 8] ?? 0xaa, 0xaa, "no byte after the field is written");
      assert.equal(readU64(buf, at), v);
      assert.equal(readU64Safe(buf, at), v);
    }),
    { numRuns: 500 },
  );
});

test("readU64Safe is -1 exactly from 2^53 on; readU64 is then the nearest double", () => {
  fc.assert(
    fc.property(
      fc.oneof(anyU64, fc.constantFrom(2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, U64_MAX)),
      (v) => {
        const buf = u64Bytes(v);
        assert.equal(readU64Safe(buf, 0), v < 2n ** 53n ? Number(v) : -1);
        assert.equal(readU64(buf, 0), Number(v));
      },
    ),
    { numRuns: 500 },
  );
});

test("u32 and u16 writers and readers round-trip, big-endian", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 0xffff }), (a, b) => {
      const buf = Buffer.alloc(6);
      writeU32(buf, 0, a);
      writeU16(buf, 4, b);
      assert.equal(buf.readUInt32BE(0), a);
      assert.equal(buf.readUInt16BE(4), b);
      assert.equal(readU32(buf, 0), a);
      assert.equal(readU16(buf, 4), b);
    }),
  );
});

test("writeTimestampMs stores exactly ms * 10^6 nanoseconds and readTimestampMs gives ms back", () => {
  fc.assert(
    fc.property(timestampMs, (ms) => {
      const buf = Buffer.alloc(8);
      writeTimestampMs(buf, 0, ms);
      assert.deepEqual(buf, u64Bytes(BigInt(ms) * NS_PER_MS), `ms=${ms}`);
      assert.equal(readTimestampMs(buf, 0), ms);
    }),
    { numRuns: 1000 },
  );
});

test("readTimestampMs reads any u64 of nanoseconds: whole ms exactly, the rest as a fraction", () => {
  fc.assert(
    fc.property(fc.oneof(anyU64, fc.bigInt({ min: 0n, max: 2n ** 53n })), (ns) => {
      const whole = Number(ns / NS_PER_MS); // below 2^45: exact
      const rest = Number(ns % NS_PER_MS);
      const got = readTimestampMs(u64Bytes(ns), 0);
      assert.equal(got, rest === 0 ? whole : whole + rest / 1e6, `ns=${ns}`);
      // The fraction is as precise as a double of that size allows: at most 1 ms off, even when
      // x.999999 rounds up to x + 1 (a double near 2^42 has steps of 2^-11 ms).
      assert.ok(got >= whole && got <= whole + 1);
      if (ns < 2n ** 53n) assert.ok(Math.abs(got - Number(ns) / 1e6) <= 2 ** -52 * Math.max(1, got) * 2);
    }),
    { numRuns: 1000 },
  );
  // A few that can be written out by hand.
  assert.equal(readTimestampMs(u64Bytes(1n), 0), 0.000001);
  assert.equal(readTimestampMs(u64Bytes(1_500_000n), 0), 1.5);
  assert.equal(readTimestampMs(u64Bytes(1_700_000_000_000_500_000n), 0), 1_700_000_000_000.5);
  assert.equal(readTimestampMs(u64Bytes(999_999n), 0), 0.999999);
  assert.equal(readTimestampMs(u64Bytes(U64_MAX), 0), 18_446_744_073_709 + 0.551615);
});

test("compareTimestamps orders stored u64 timestamps like BigInt comparison", () => {
  const near = fc.bigInt({ min: 0n, max: 3n }).map((d) => (1n << 32n) - 2n + d); // straddles the u32 boundary
  const value = fc.oneof(anyU64, near);
  fc.assert(
    fc.property(value, value, (a, b) => {
      const buf = Buffer.concat([Buffer.alloc(3), u64Bytes(a), u64Bytes(b)]);
      const sign = Math.sign(compareTimestamps(buf, 3, buf, 11));
      assert.equal(sign, a < b ? -1 : a > b ? 1 : 0, `${a} vs ${b}`);
    }),
    { numRuns: 1000 },
  );
});

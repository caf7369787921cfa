/**
 * RecordCursor: several batches in one buffer, empty input, ranges inside a larger buffer, and
 * malformed input, which must throw ConchError(INVALID_BATCH) and nothing else, always end, and never
 * read outside the range it was given (checked with helpers.boundedView).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  ConchError,
  ErrorCode,
  RecordCursor,
  stampBaseOffset,
  validateBatches,
} from "../../src/format/index.js";
import { boundedView, buildBatch, innerRecordAt, smallBatch } from "./helpers.js";

const isInvalidBatch = (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH;

/** Walks buf[start, end) to the end or the first error, checking bounds and that it terminates. */
function walk(buf: Buffer, start = 0, end = buf.length): { records: number; error: unknown } {
  const { view, violations } = boundedView(buf, start, end);
  const c = new RecordCursor(view, start, end);
  // Each record takes at least its 29-byte header: more calls than this would mean a loop.
  const bound = Math.floor((end - start) / 29) + 1;
  let records = 0;
  let error: unknown = null;
  try {
    while (c.next()) {
      records++;
      assert.ok(records <= bound, "more records than the bytes can hold");
      assert.ok(start <= c.keyStart && c.keyStart <= c.keyEnd && c.keyEnd === c.valueStart);
      assert.ok(c.valueStart <= c.valueEnd && c.valueEnd <= end);
      c.key();
      c.value();
      assert.ok(Number.isFinite(c.timestampMs));
      assert.ok(Number.isSafeInteger(c.offset));
    }
  } catch (e) {
    error = e;
  }
  assert.deepEqual(violations, [], "read outside the range");
  return { records, error };
}

test("an empty buffer or range has no records", () => {
  const c = new RecordCursor(Buffer.alloc(0));
  assert.equal(c.next(), false);
  assert.equal(c.next(), false);
  assert.equal(new RecordCursor().next(), false, "a cursor made without a buffer");
  const b = smallBatch();
  assert.equal(new RecordCursor(b, 10, 10).next(), false);
  assert.equal(new RecordCursor(b, b.length).next(), false);
});

test("several batches in one buffer, and reset() to walk again", () => {
  const a = buildBatch([
    { value: "a0", key: null, timestampMs: 1 },
    { value: "a1", key: "k", timestampMs: 2 },
  ]);
  const b = buildBatch([{ value: "b0", key: null, timestampMs: 3 }]);
  stampBaseOffset(a, 0, 10);
  stampBaseOffset(b, 0, 12);
  const buf = Buffer.concat([a, b]);
  const c = new RecordCursor(buf);
  const seen: string[] = [];
  while (c.next()) seen.push(`${c.offset}@${c.baseOffset}:${c.value().toString()}@${c.timestampMs}`);
  assert.deepEqual(seen, ["10@10:a0@1", "11@10:a1@2", "12@12:b0@3"]);
  assert.equal(c.reset(buf, a.length).next(), true, "reset to the second batch");
  assert.equal(c.offset, 12);
  assert.equal(c.next(), false);
  assert.equal(c.reset(buf, 0, a.length).next(), true, "reset to the first batch only");
  assert.ok(c.next());
  assert.equal(c.next(), false);
  assert.equal(c.buffer, buf);
});

test("a range inside a larger buffer; an end past the buffer is capped", () => {
  const b = smallBatch();
  const buf = Buffer.concat([Buffer.alloc(13, 0xc1), b, Buffer.alloc(9, 0xc1)]);
  assert.deepEqual(walk(buf, 13, 13 + b.length), { records: 3, error: null });
  const c = new RecordCursor(b, 0, b.length + 1000);
  let n = 0;
  while (c.next()) n++;
  assert.equal(n, 3);
});

test("malformed batches throw INVALID_BATCH", () => {
  const cases: [string, (b: Buffer) => Buffer | undefined][] = [
    ["outer magic", (b) => void b.writeUInt8(0, 0)],
    ["metadata size 0", (b) => void b.writeUInt32BE(0, 17)],
    ["metadata size 21", (b) => void b.writeUInt32BE(21, 17)],
    ["payload size past the end", (b) => void b.writeUInt32BE(b.readUInt32BE(21) + 1, 21)],
    ["count 0", (b) => void b.writeUInt32BE(0, 25)],
    ["count too large", (b) => void b.writeUInt32BE(4, 25)],
    ["count too small", (b) => void b.writeUInt32BE(2, 25)],
    ["base offset 2^53", (b) => void b.writeBigUInt64BE(2n ** 53n, 9)],
    ["last offset 2^53", (b) => void b.writeBigUInt64BE(2n ** 53n - 2n, 9)],
    ["inner magic", (b) => void b.writeUInt8(0xc2, innerRecordAt(b, 1))],
    ["inner count 2", (b) => void b.writeUInt32BE(2, innerRecordAt(b, 2) + 25)],
    ["inner delta", (b) => void b.writeUInt32BE(5, innerRecordAt(b, 1) + 13)],
    ["inner delta high word", (b) => void b.writeUInt32BE(1, innerRecordAt(b, 0) + 9)],
    ["inner key past the end", (b) => void b.writeUInt32BE(1000, innerRecordAt(b, 2) + 17)],
    ["inner value past the end", (b) => void b.writeUInt32BE(1000, innerRecordAt(b, 2) + 21)],
    ["truncated header", (b) => b.subarray(0, 30)],
    ["truncated records", (b) => b.subarray(0, b.length - 1)],
    ["trailing garbage", (b) => Buffer.concat([b, Buffer.from([0xc1, 0, 0])])],
  ];
  for (const [name, mutate] of cases) {
    const copy = Buffer.from(smallBatch());
    const bad = mutate(copy) ?? copy;
    const { error } = walk(bad);
    assert.ok(isInvalidBatch(error), `${name}: ${String(error)}`);
    // The same bad batch after a good one: the good one's records come first.
    const after = Buffer.concat([smallBatch(), bad]);
    const r = walk(after);
    assert.ok(isInvalidBatch(r.error), name);
    assert.ok(r.records >= 3, name);
  }
  // A batch whose last offset is exactly 2^53 - 1 is fine.
  const edge = Buffer.from(smallBatch());
  edge.writeBigUInt64BE(2n ** 53n - 3n, 9);
  assert.deepEqual(walk(edge), { records: 3, error: null });
});

test("fuzz: random bytes only ever end the walk or throw INVALID_BATCH", () => {
  const prefix = fc.constantFrom(Buffer.alloc(0), Buffer.from([0xc1]), smallBatch().subarray(0, 29));
  fc.assert(
    fc.property(prefix, fc.uint8Array({ maxLength: 300 }), (p, rest) => {
      const buf = Buffer.concat([p, rest]);
      const { error } = walk(buf);
      assert.ok(error === null || isInvalidBatch(error), String(error));
    }),
    { numRuns: 300 },
  );
});

test("fuzz: valid batches with random bytes changed, cut or spliced", () => {
  const base = Buffer.concat([smallBatch(), buildBatch([{ value: "x", key: "y", timestampMs: 9 }])]);
  const edit = fc.record({
    at: fc.nat({ max: base.length - 1 }),
    byte: fc.integer({ min: 0, max: 255 }),
  });
  fc.assert(
    fc.property(fc.array(edit, { maxLength: 4 }), fc.nat({ max: base.length }), (edits, cut) => {
      const buf = Buffer.from(base);
      for (const e of edits) buf[e.at] = e.byte;
      const { records, error } = walk(buf.subarray(0, cut));
      assert.ok(error === null || isInvalidBatch(error), String(error));
      if (error === null) assert.ok(records <= 4);
    }),
    { numRuns: 500 },
  );
});

test("fuzz: whatever validateBatches accepts, the cursor walks without an error", () => {
  const base = smallBatch();
  fc.assert(
    fc.property(fc.nat({ max: base.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, byte) => {
      const buf = Buffer.from(base);
      buf[at] = byte;
      let records = -1;
      try {
        records = validateBatches(buf, 1 << 20).records;
      } catch {
        return; // rejected: nothing to compare
      }
      assert.deepEqual(walk(buf), { records, error: null });
    }),
    { numRuns: 300 },
  );
});

/**
 * The extended inner-record layout (attribute bit 3, docs/format.md): every way its records and
 * headers blocks can be malformed is caught by checkBatch (re-sealed first, so the structural check
 * and not the CRC has to catch it) and by the readers, and the v1 rule still holds: v1 records
 * under the bit do not pass as extended ones.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BatchBuilder,
  BatchStatus,
  ConchError,
  checkBatch,
  ErrorCode,
  HeaderCursor,
  headersBlockSize,
  headersBlockValid,
  RecordCursor,
  readHeaders,
  validateBatches,
} from "../../src/format/index.js";
import { boundedView, innerRecordAt, reseal, smallBatch, smallExtendedBatch, statusName } from "./helpers.js";

const MAX = 1 << 20;

/** checkBatch's result on a copy of the extended batch changed by `mutate` and re-sealed. */
function tampered(mutate: (b: Buffer) => void): string {
  const b = Buffer.from(smallExtendedBatch());
  mutate(b);
  reseal(b);
  return statusName(checkBatch(b, 0, b.length, MAX));
}

/** Reads every record and header of `buf`; the number of records, or the error thrown. */
function walk(buf: Buffer): { records: number; headers: number; error: unknown } {
  const c = new RecordCursor(buf);
  const h = new HeaderCursor();
  let records = 0;
  let headers = 0;
  try {
    while (c.next()) {
      records++;
      c.key();
      c.value();
      c.headers(h);
      while (h.next()) {
        h.key();
        h.value();
        headers++;
      }
    }
    return { records, headers, error: null };
  } catch (error) {
    return { records, headers, error };
  }
}

function isInvalidBatch(e: unknown): boolean {
  return e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH;
}

/** Where record 0's headers block starts (its key "k1" and value "v1" are 2 bytes each). */
const BLOCK = 49 + 29 + 4;

test("the extended batch is valid, read by the cursor, and is the extended layout", () => {
  const b = smallExtendedBatch();
  assert.equal(b.readUInt16BE(33), 0x0008);
  assert.equal(checkBatch(b, 0, b.length, MAX), b.length);
  assert.deepEqual(walk(b), { records: 3, headers: 3, error: null });
});

test("the version rule: v1 records under attribute bit 3 are not accepted as extended ones", () => {
  // Their count field of 1 reads as a 1-byte headers block, which cannot be one.
  const b = Buffer.from(smallBatch());
  b.writeUInt16BE(0x0008, 33);
  reseal(b);
  assert.ok(checkBatch(b, 0, b.length, MAX) < 0);
  assert.ok(isInvalidBatch(walk(b).error));
  // And a reader of v1 (bit 3 reserved) refuses an extended batch: shown by clearing the bit.
  const e = Buffer.from(smallExtendedBatch());
  e.writeUInt16BE(0, 33);
  reseal(e);
  assert.equal(statusName(checkBatch(e, 0, e.length, MAX)), "BAD_RECORD");
  assert.ok(isInvalidBatch(walk(e).error));
});

test("attribute bit 4 (kept for Kafka RecordBatch v2 payloads) and bits 5-15 are refused", () => {
  for (let bit = 4; bit < 16; bit++) {
    assert.equal(
      tampered((b) => b.writeUInt16BE(0x0008 | (1 << bit), 33)),
      "BAD_METADATA",
      `bit ${bit}`,
    );
    const b = Buffer.from(smallExtendedBatch());
    b.writeUInt16BE(0x0008 | (1 << bit), 33);
    assert.ok(isInvalidBatch(walk(b).error), `the cursor refuses bit ${bit}`);
  }
});

test("extended record sizes: null is all ones, anything else must fit the batch", () => {
  for (const i of [0, 1, 2]) {
    const at = (b: Buffer) => innerRecordAt(b, i);
    assert.equal(
      tampered((b) => b.writeUInt32BE(0xfffffffe, at(b) + 17)),
      "BAD_RECORD",
      `record ${i} key`,
    );
    assert.equal(
      tampered((b) => b.writeUInt32BE(0xfffffffe, at(b) + 21)),
      "BAD_RECORD",
      `record ${i} value`,
    );
    assert.equal(
      tampered((b) => b.writeUInt32BE(1000, at(b) + 25)),
      "BAD_RECORD",
      `record ${i} headers`,
    );
    assert.equal(
      tampered((b) => b.writeUInt32BE(0xffffffff, at(b) + 25)),
      "BAD_RECORD",
      `record ${i} headers`,
    );
  }
  // Record 1's empty value made null: one byte fewer is claimed than there is.
  assert.notEqual(
    tampered((b) => b.writeUInt32BE(0xffffffff, innerRecordAt(b, 2) + 17)),
    `size ${smallExtendedBatch().length}`,
  );
});

test("a malformed headers block is BAD_RECORD, and the header cursor throws on it", () => {
  const cases: [string, (b: Buffer) => void][] = [
    ["header count 0", (b) => b.writeUInt32BE(0, BLOCK)],
    ["header count 2 of 3: bytes left over", (b) => b.writeUInt32BE(2, BLOCK)],
    ["header count 4 of 3", (b) => b.writeUInt32BE(4, BLOCK)],
    ["header count 2^32 - 1", (b) => b.writeUInt32BE(0xffffffff, BLOCK)],
    ["first key size past the block", (b) => b.writeUInt32BE(1000, BLOCK + 4)],
    ["first key size all ones (header keys are never null)", (b) => b.writeUInt32BE(0xffffffff, BLOCK + 4)],
    ["first key one byte longer", (b) => b.writeUInt32BE(9, BLOCK + 4)],
    ["first value size past the block", (b) => b.writeUInt32BE(1000, BLOCK + 16)],
    ["first value size one byte shorter", (b) => b.writeUInt32BE(2, BLOCK + 16)],
    ["a null value made 0 bytes: the block is not filled", (b) => b.writeUInt32BE(0, BLOCK + 31)],
  ];
  for (const [name, mutate] of cases) {
    assert.equal(tampered(mutate), "BAD_RECORD", name);
    const b = Buffer.from(smallExtendedBatch());
    mutate(b);
    const { error } = walk(b);
    assert.ok(isInvalidBatch(error), `${name}: ${String(error)}`);
  }
  // Blocks too small to hold a count, pointed at by the record's count field (the block is its tail).
  for (const size of [1, 2, 3]) {
    const block = Buffer.alloc(size);
    assert.equal(headersBlockValid(block, 0, size), false, `${size}-byte block`);
    assert.throws(() => new HeaderCursor().reset(block, 0, size), isInvalidBatch);
  }
});

test("checkBatch and the readers read nothing outside the extended batch", () => {
  const b = smallExtendedBatch();
  const padded = Buffer.concat([Buffer.alloc(7, 0xff), b, Buffer.alloc(64, 0xff)]);
  for (let end = 7; end <= 7 + b.length + 64; end++) {
    const { view, violations } = boundedView(padded, 7, end);
    const status = checkBatch(view, 7, end, MAX);
    assert.deepEqual(violations, [], `end=${end}`);
    assert.equal(status, end - 7 >= b.length ? b.length : BatchStatus.TRUNCATED, `end=${end}`);
  }
  // Every header block's walk stays inside its block.
  const c = new RecordCursor(b);
  while (c.next()) {
    const { view, violations } = boundedView(b, c.headersStart, c.headersEnd);
    assert.ok(headersBlockValid(view, c.headersStart, c.headersEnd) || c.headersStart === c.headersEnd);
    readHeaders(view, c.headersStart, c.headersEnd);
    assert.deepEqual(violations, []);
  }
});

test("every bit flip of an extended batch is caught, except in the base offset", () => {
  const b = smallExtendedBatch();
  for (let i = 0; i < b.length; i++) {
    if (i >= 9 && i < 17) continue;
    for (const mask of [1, 2, 4, 8, 16, 32, 64, 128]) {
      const x = Buffer.from(b);
      x[i] = x[i]! ^ mask;
      assert.ok(checkBatch(x, 0, x.length, MAX) < 0, `flip ${mask} at byte ${i} went undetected`);
    }
  }
});

test("headers the builder refuses: a TypeError, and nothing is written", () => {
  const bad: unknown[] = [
    [["k", 1]],
    [["k"]],
    [[null, "v"]],
    ["k=v"],
    { k: 1 },
    { k: undefined },
    { k: {} },
    42,
    "k=v",
  ];
  for (const h of bad) {
    assert.equal(headersBlockSize(h as never), -1, JSON.stringify(h));
    const builder = new BatchBuilder();
    builder.add("before", "k", 1);
    const size = builder.sizeBytes;
    assert.throws(() => builder.add("v", "k", 1, h as never), TypeError, JSON.stringify(h));
    assert.equal(builder.sizeBytes, size);
    assert.equal(builder.count, 1);
    assert.equal(builder.finish().readUInt16BE(33), 0, "still the v1 layout");
  }
  // No headers at all is no block, whichever way it is said.
  assert.equal(headersBlockSize([]), 0);
  assert.equal(headersBlockSize({}), 0);
});

test("a plain batch stays v1; the first record that needs it switches the batch, whatever came before", () => {
  const needs: [string, (b: BatchBuilder) => void][] = [
    ["a header", (b) => b.add("v", "k", 5, { h: "1" })],
    ["a null value", (b) => b.add(null, "k", 5)],
    ["a null value without a key", (b) => b.add(null, null, 5)],
    ["an empty key", (b) => b.add("v", "", 5)],
    ["an empty key as bytes", (b) => b.add("v", new Uint8Array(0), 5)],
    ["a key with an empty value", (b) => b.add("", "k", 5)],
  ];
  for (const [name, add] of needs) {
    const b = new BatchBuilder({ slabBytes: 64 });
    b.add("plain", "key", 1);
    b.add("no key", null, 2);
    b.add("", null, 3);
    assert.equal(b.sizeBytes, 49 + 3 * 29 + 3 + 5 + 6);
    add(b);
    b.add("after", null, 6);
    const batch = b.finish();
    assert.equal(batch.readUInt16BE(33), 0x0008, name);
    assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length, name);
    const c = new RecordCursor(batch);
    const seen: [string | null, string, boolean][] = [];
    while (c.next()) seen.push([c.key()?.toString() ?? null, c.value().toString(), c.valueNull]);
    assert.deepEqual(seen.slice(0, 3), [
      ["key", "plain", false],
      [null, "no key", false],
      [null, "", false],
    ]);
    assert.deepEqual(seen[4], [null, "after", false]);
    // The next batch starts in the v1 layout again.
    b.add("x", null, 1);
    assert.equal(b.finish().readUInt16BE(33), 0, `${name}: the next batch`);
  }
  const plain = new BatchBuilder();
  plain.add("v", "k", 1);
  plain.add("", null, 1);
  assert.equal(plain.finish().readUInt16BE(33), 0);
});

test("fuzz: whatever checkBatch accepts of a tampered extended batch, the readers walk", () => {
  const base = smallExtendedBatch();
  fc.assert(
    fc.property(
      fc.array(fc.record({ at: fc.nat({ max: base.length - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
      (edits) => {
        const buf = Buffer.from(base);
        for (const e of edits) buf[e.at] = e.byte;
        reseal(buf);
        let records = -1;
        try {
          records = validateBatches(buf, MAX).records;
        } catch {
          // Rejected; the readers must still only end or throw INVALID_BATCH.
          const { error } = walk(buf);
          assert.ok(error === null || isInvalidBatch(error), String(error));
          return;
        }
        const r = walk(buf);
        assert.equal(r.error, null);
        assert.equal(r.records, records);
      },
    ),
    { numRuns: 1000 },
  );
});

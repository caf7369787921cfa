/**
 * BatchBuilder's slab handling: batches carved from one slab never overlap, a batch that outgrows
 * the slab moves whole to a new one, and none of that changes a single output byte.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  BatchBuilder,
  checkBatch,
  MAX_TIMESTAMP_MS,
  RecordCursor,
  stampBaseOffset,
} from "../../src/format/index.js";
import { buildBatch, type TestRecord } from "./helpers.js";

const MAX = 64 << 20;

test("finish() on an empty batch throws, also after clear(), and the builder stays usable", () => {
  const b = new BatchBuilder();
  assert.throws(() => b.finish(), RangeError);
  b.add("x", null, 1);
  b.clear();
  assert.equal(b.count, 0);
  assert.throws(() => b.finish(), RangeError);
  b.add("y", null, 2);
  const batch = b.finish();
  assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
  assert.throws(() => b.finish(), RangeError, "finish() started a new, empty batch");
});

test("count and sizeBytes describe the batch being built", () => {
  const b = new BatchBuilder();
  assert.equal(b.count, 0);
  assert.equal(b.sizeBytes, 49, "header + metadata");
  b.add("abc", "k", 1);
  assert.equal(b.count, 1);
  assert.equal(b.sizeBytes, 49 + 29 + 1 + 3);
  b.add(new Uint8Array(10), null, 1);
  assert.equal(b.sizeBytes, 49 + 29 + 4 + 29 + 10);
  assert.equal(b.finish().length, 49 + 29 + 4 + 29 + 10);
  assert.equal(b.sizeBytes, 49);
});

test("clear() drops the batch being built, even after it moved to a new slab", () => {
  const records: TestRecord[] = [
    { value: "a", key: "k", timestampMs: 10 },
    { value: "bb", key: null, timestampMs: 5 },
  ];
  const expected = buildBatch(records);
  for (const slabBytes of [0, 60, 100, 1 << 20]) {
    const b = new BatchBuilder({ slabBytes });
    b.add(Buffer.alloc(300, 7), "dropped", 999);
    b.add("more", "dropped", 1000);
    b.clear();
    for (const r of records) b.add(r.value, r.key, r.timestampMs);
    assert.deepEqual(b.finish(), expected, `slabBytes ${slabBytes}`);
  }
});

test("slab overflow mid-batch: records larger than the slab, batches larger than the slab", () => {
  const records: TestRecord[] = [];
  for (let i = 0; i < 40; i++) {
    records.push({
      value: Buffer.alloc(i * 17, i),
      key: i % 3 === 0 ? null : `key-${i}`,
      timestampMs: 1000 - i,
    });
  }
  const expected = buildBatch(records);
  for (const slabBytes of [1, 49, 64, 100, 256, 1000]) {
    const b = new BatchBuilder({ slabBytes });
    for (const r of records) b.add(r.value, r.key, r.timestampMs);
    const batch = b.finish();
    assert.deepEqual(batch, expected, `slabBytes ${slabBytes}`);
    assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
  }
});

test("property: the output does not depend on slabBytes", () => {
  const record = fc.record({
    value: fc.oneof(fc.string({ maxLength: 80 }), fc.uint8Array({ maxLength: 300 })),
    key: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: null }),
    timestampMs: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  });
  fc.assert(
    fc.property(
      fc.array(fc.array(record, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 5 }),
      fc.integer({ min: 0, max: 2000 }),
      (batches, slabBytes) => {
        const small = new BatchBuilder({ slabBytes });
        const big = new BatchBuilder();
        for (const records of batches) {
          for (const r of records) {
            small.add(r.value, r.key, r.timestampMs);
            big.add(r.value, r.key, r.timestampMs);
          }
          assert.deepEqual(small.finish(), big.finish());
        }
      },
    ),
    { numRuns: 200 },
  );
});

test("batches finished from one slab never overlap: later work leaves earlier batches unchanged", () => {
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add("first", "a", 1);
  const first = b.finish();
  b.add("second", "b", 2);
  b.add("second, again", "b", 3);
  const second = b.finish();
  assert.equal(first.buffer, second.buffer, "both carved from the same slab (the case under test)");
  assert.ok(first.byteOffset + first.length <= second.byteOffset);
  const firstCopy = Buffer.from(first);
  const secondCopy = Buffer.from(second);
  // Keep building: cleared records, a finished batch, and a batch that outgrows the slab.
  b.add("to be cleared", "c", 4);
  b.clear();
  b.add("third", "c", 5);
  const third = b.finish();
  for (let i = 0; i < 50; i++) b.add(Buffer.alloc(200, 0xee), "d", 6);
  const fourth = b.finish();
  assert.notEqual(fourth.buffer, first.buffer, "the big batch moved to a new slab");
  b.add("in progress", null, 7);
  stampBaseOffset(second, 0, 99);
  assert.deepEqual(first, firstCopy, "the first batch is untouched");
  assert.deepEqual(second.subarray(17), secondCopy.subarray(17), "only the stamp changed in the second");
  for (const batch of [first, second, third, fourth]) {
    assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
  }
});

test("a rejected timestamp throws RangeError before anything is written", () => {
  const b = new BatchBuilder();
  b.add("ok", null, 5);
  const size = b.sizeBytes;
  for (const bad of [
    -1,
    0.5,
    1.000001,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    MAX_TIMESTAMP_MS + 1,
    2 ** 53,
  ]) {
    assert.throws(() => b.add("bad", "k", bad), RangeError, String(bad));
  }
  assert.equal(b.count, 1);
  assert.equal(b.sizeBytes, size);
  b.add("edge", null, MAX_TIMESTAMP_MS);
  b.add("zero", null, 0);
  const batch = b.finish();
  assert.equal(checkBatch(batch, 0, batch.length, MAX), batch.length);
});

test("the timestamp defaults to now", () => {
  const b = new BatchBuilder();
  const before = Date.now();
  b.add("now");
  const after = Date.now();
  const c = new RecordCursor(b.finish());
  assert.ok(c.next());
  assert.ok(c.timestampMs >= before && c.timestampMs <= after, `${c.timestampMs} in [${before}, ${after}]`);
  assert.equal(c.key(), null, "no key by default");
});

test("keys and values given as strings, Buffers or plain Uint8Arrays store the same bytes", () => {
  const views = new Uint8Array([9, 8, 7, 0x6b, 0x65, 0x79, 6]).subarray(3, 6); // "key" inside a larger array
  const a = buildBatch([{ value: "key", key: "key", timestampMs: 1 }]);
  const b = buildBatch([{ value: views, key: Buffer.from("key"), timestampMs: 1 }]);
  assert.deepEqual(a, b);
});

test("strings of every kind and length around the short-string path encode as UTF-8", () => {
  const samples: string[] = [];
  for (const n of [0, 1, 2, 31, 32, 33, 64, 100]) {
    const ascii = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3).slice(0, n);
    samples.push(ascii, `${ascii.slice(1)}é`, `é${ascii.slice(1)}`, `${ascii.slice(2)}🐚`, `${ascii}\u007f`);
    samples.push(`${ascii.slice(1)}\ud800`); // a lone surrogate: written as U+FFFD, like Buffer.from
  }
  for (const s of samples) {
    const fromString = buildBatch([{ value: s, key: s.length > 0 ? s : null, timestampMs: 1 }]);
    const fromBytes = buildBatch([
      { value: Buffer.from(s), key: s.length > 0 ? Buffer.from(s) : null, timestampMs: 1 },
    ]);
    assert.deepEqual(fromString, fromBytes, JSON.stringify(s));
  }
});

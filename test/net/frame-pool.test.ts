import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { FrameParser, FramePool } from "../../src/net/index.js";

function wire(payload: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(4 + payload.length);
  b.writeUInt32BE(payload.length, 0);
  b.set(payload, 4);
  return b;
}

function frameOf(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 13 + seed) & 0xff;
  return b;
}

test("a pooled frame is an exact-size view of the smallest slot that holds it", () => {
  const pool = new FramePool({ minBytes: 1024, maxBytes: 8192, maxFreePerSize: 2 });
  const a = pool.take(1500);
  assert.equal(a.length, 1500);
  assert.equal(a.buffer.byteLength, 2048);
  assert.equal(pool.take(1024).buffer.byteLength, 1024);
  assert.equal(pool.take(8192).buffer.byteLength, 8192);
  // Outside the slot sizes: an ordinary buffer, never given a slot back.
  const small = pool.take(100);
  const large = pool.take(8193);
  assert.equal(large.length, 8193);
  pool.give(small);
  pool.give(large);
  assert.equal(pool.free, 0);
});

test("a given-back slot is reused, once, and foreign or offset buffers are ignored", () => {
  const pool = new FramePool({ minBytes: 1024, maxBytes: 4096, maxFreePerSize: 1 });
  const a = pool.take(3000);
  pool.give(a);
  pool.give(a);
  assert.equal(pool.free, 1, "the same slot is not listed twice");
  const b = pool.take(2500);
  assert.equal(b.buffer, a.buffer, "the slot came back");
  assert.equal(pool.free, 0);
  pool.give(Buffer.alloc(4096));
  pool.give(b.subarray(10));
  assert.equal(pool.free, 0, "a foreign buffer or a view past the slot's start is not taken in");
  const c = pool.take(4000);
  const d = pool.take(4000);
  pool.give(c);
  pool.give(d);
  assert.equal(pool.free, 1, "at most maxFreePerSize free slots per size");
});

test("slot sizes must be powers of two", () => {
  assert.throws(() => new FramePool({ minBytes: 1000, maxBytes: 4096, maxFreePerSize: 1 }), RangeError);
  assert.throws(() => new FramePool({ minBytes: 4096, maxBytes: 1024, maxFreePerSize: 1 }), RangeError);
});

test("pushCopy: bytes from a reused read buffer make the same frames as pushed chunks", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 12 }),
      fc.array(fc.integer({ min: 1, max: 2500 }), { minLength: 1, maxLength: 20 }),
      fc.boolean(),
      (sizes, cuts, pooled) => {
        const frames = sizes.map((n, i) => frameOf(n, i));
        const stream = Buffer.concat(frames.map(wire));
        const pool = new FramePool({ minBytes: 256, maxBytes: 2048, maxFreePerSize: 2 });
        const parser = new FrameParser(pooled ? { maxFrameBytes: 4000, pool } : { maxFrameBytes: 4000 });
        const scratch = Buffer.allocUnsafe(2500);
        const got: Buffer[] = [];
        let at = 0;
        let i = 0;
        while (at < stream.length) {
          const n = Math.min(cuts[i++ % cuts.length]!, stream.length - at);
          stream.copy(scratch, 0, at, at + n);
          parser.pushCopy(scratch.subarray(0, n));
          // The "socket" reuses its buffer for the next read: nothing may still point into it.
          scratch.fill(0xee);
          at += n;
          for (let f = parser.next(); f !== null; f = parser.next()) {
            got.push(Buffer.from(f));
            pool.give(f);
          }
        }
        assert.deepEqual(got, frames);
        assert.equal(parser.midFrame, false);
        assert.equal(parser.bufferedBytes, 0);
      },
    ),
    { numRuns: 300 },
  );
});

test("pushCopy copies the start of a large frame straight into its buffer, not into a chunk", () => {
  const parser = new FrameParser({ maxFrameBytes: 1 << 20 });
  const w = wire(frameOf(100_000, 7));
  parser.pushCopy(w.subarray(0, 65_536));
  assert.equal(parser.bufferedBytes, 100_000, "only the frame's own buffer is held");
  assert.equal(parser.next(), null);
  const target = parser.readTarget(1);
  assert.ok(target !== null, "the rest can be read straight into the frame");
  assert.equal(target.length, 100_004 - 65_536);
  target.set(w.subarray(65_536));
  parser.wrote(target.length);
  assert.deepEqual(parser.next(), w.subarray(4));
});

test("pushCopy refuses an oversized size field before allocating", () => {
  const parser = new FrameParser({ maxFrameBytes: 100 });
  const head = Buffer.alloc(8);
  head.writeUInt32BE(0xffffffff, 0);
  assert.throws(() => parser.pushCopy(head), /over the maximum/);
  assert.throws(() => parser.next(), /over the maximum/);
});

/**
 * The adaptive encode buffer pool: buffers are reused, capacity grows to fit a batch at once and
 * shrinks only by RocketMQ's rule (over 64 KiB, >= 3x the moving average, 30 s since the last
 * shrink, to max(8 KiB, 1.5x average)); a BatchBuilder on a pool writes the same bytes as one without.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { EncodeBufferPool } from "../../src/format/encode-buffer-pool.js";

test("a released buffer is handed out again; one of an older capacity is dropped", () => {
  const pool = new EncodeBufferPool();
  assert.equal(pool.capacity, 8 * 1024);
  const a = pool.acquire();
  assert.equal(a.length, 8 * 1024);
  pool.release(a.subarray(10, 20));
  const b = pool.acquire();
  assert.equal(b.buffer, a.buffer, "the same memory comes back");
  const big = pool.acquire(100_000);
  assert.equal(pool.capacity, 128 * 1024, "grows by doubling to fit");
  assert.equal(big.length, 128 * 1024);
  pool.release(b);
  assert.equal(pool.freeCount, 0, "an 8 KiB buffer is no use at 128 KiB");
  pool.release(big);
  assert.equal(pool.acquire().buffer, big.buffer);
});

test("shrinks only past 64 KiB, at 3x the average, 30 s after the last shrink, to 1.5x the average", () => {
  let now = 0;
  const pool = new EncodeBufferPool({ now: () => now });
  pool.acquire(200_000);
  assert.equal(pool.capacity, 256 * 1024);
  for (let i = 0; i < 200; i++) pool.noteSize(200_000);
  now = 60_000;
  pool.noteSize(200_000);
  assert.equal(pool.capacity, 256 * 1024, "the average is close to the capacity: no shrink");
  // Small batches pull the average down; nothing happens before 30 s have passed since a shrink.
  let avg = 0;
  for (let i = 0; i < 100 && pool.capacity === 256 * 1024; i++) {
    pool.noteSize(1_000);
    avg = pool.averageBytes;
  }
  assert.ok(3 * avg <= 256 * 1024, "not before the capacity was 3x the average");
  assert.ok(3 * (avg + (0.05 * (avg - 1_000)) / 0.95) > 256 * 1024, "but as soon as it was");
  assert.equal(pool.capacity, Math.max(8 * 1024, Math.ceil(1.5 * avg)), "shrunk to 1.5x the average");
  const shrunk = pool.capacity;
  for (let i = 0; i < 200; i++) pool.noteSize(1_000);
  assert.equal(pool.capacity, shrunk, "no second shrink within 30 s");
  now += 30_000;
  pool.noteSize(1_000);
  assert.ok(pool.capacity <= shrunk);
  assert.ok(pool.capacity >= 8 * 1024, "never below the initial size");
});

test("never shrinks at or below 64 KiB", () => {
  let now = 0;
  const pool = new EncodeBufferPool({ now: () => now });
  pool.acquire(60_000);
  assert.equal(pool.capacity, 64 * 1024);
  now = 1e9;
  for (let i = 0; i < 500; i++) pool.noteSize(100);
  assert.equal(pool.capacity, 64 * 1024);
});

test("a BatchBuilder on a pool writes the same batches, each in its own buffer, and reuses them", () => {
  const pool = new EncodeBufferPool();
  const pooled = new BatchBuilder({ pool });
  const plain = new BatchBuilder({ slabBytes: 1 << 16 });
  const value = Buffer.alloc(3000, 7);
  const seen = new Set<ArrayBufferLike>();
  for (let round = 0; round < 6; round++) {
    const records = 1 + round * 7; // 1 to 36 records: crosses 8, 16, 32 and 64 KiB
    for (let i = 0; i < records; i++) {
      pooled.add(value, i % 2 === 0 ? `k${i}` : null, 1_700_000_000_000 + i);
      plain.add(value, i % 2 === 0 ? `k${i}` : null, 1_700_000_000_000 + i);
    }
    const a = pooled.finish();
    const b = plain.finish();
    assert.deepEqual(a, b, `round ${round}`);
    assert.equal(a.byteOffset, 0, "each batch starts its own buffer");
    seen.add(a.buffer);
    pool.release(a);
  }
  // The capacity settled at the largest batch; later batches of that size reuse its buffer.
  const before = seen.size;
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 36; j++) pooled.add(value, null, 1);
    const batch = pooled.finish();
    seen.add(batch.buffer);
    pool.release(batch);
  }
  assert.ok(seen.size <= before + 1, `steady batches reuse buffers (${seen.size - before} new)`);
});

test("detach gives an idle builder's buffer back; the next add takes one again", () => {
  const pool = new EncodeBufferPool();
  const b = new BatchBuilder({ pool });
  b.detach();
  assert.equal(pool.freeCount, 1);
  b.add("x", null, 5);
  assert.equal(pool.freeCount, 0);
  b.detach(); // a batch in progress keeps its buffer
  assert.equal(pool.freeCount, 0);
  assert.equal(b.finish().length > 0, true);
});

test("free buffers past maxFree are kept up to maxFreeBytes, counted at the current capacity", () => {
  const held = (pool: EncodeBufferPool): number => {
    const out = Array.from({ length: 100 }, () => pool.acquire());
    for (const b of out) pool.release(b);
    return pool.freeCount;
  };
  assert.equal(held(new EncodeBufferPool()), 16);
  assert.equal(held(new EncodeBufferPool({ maxFreeBytes: 64 * 8 * 1024 })), 64);
  const pool = new EncodeBufferPool({ maxFreeBytes: 64 * 8 * 1024 });
  pool.acquire(10_000); // capacity 16 KiB: the same bytes hold 32 buffers
  assert.equal(held(pool), 32);
});

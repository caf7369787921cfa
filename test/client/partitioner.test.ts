import assert from "node:assert/strict";
import { test } from "node:test";
import { murmur2, partitionForKey, StickyPartitioner } from "../../src/client/partitioner.js";

// The vectors of Kafka's own murmur2 test (UtilsTest.testMurmur2): same hash, same partitions.
const VECTORS: Array<[string, number]> = [
  ["21", -973932308],
  ["foobar", -790332482],
  ["a-little-bit-long-string", -985981536],
  ["a-little-bit-longer-string", -1486304829],
  ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
  ["abc", 479470107],
];

test("murmur2 matches Kafka's test vectors", () => {
  for (const [key, hash] of VECTORS) assert.equal(murmur2(Buffer.from(key)), hash, key);
});

test("murmur2 covers every tail length and the empty key", () => {
  // Values computed with the reference (Kafka) implementation.
  assert.equal(murmur2(Buffer.alloc(0)), 275646681);
  const seen = new Set<number>();
  for (let n = 0; n <= 8; n++) seen.add(murmur2(Buffer.from("abcdefgh".slice(0, n))));
  assert.equal(seen.size, 9);
});

test("a key's partition is its positive hash modulo the partition count", () => {
  for (const [key, hash] of VECTORS) {
    for (const n of [1, 3, 7, 10, 64]) {
      const expected = (hash & 0x7fffffff) % n;
      assert.equal(partitionForKey(key, n), expected);
      assert.equal(partitionForKey(Buffer.from(key), n), expected);
    }
  }
  assert.equal(partitionForKey("foobar", 10), 6);
});

test("string keys are hashed as UTF-8, long ones too", () => {
  const key = "ключ-🔑-".repeat(200);
  assert.equal(partitionForKey(key, 97), (murmur2(Buffer.from(key, "utf8")) & 0x7fffffff) % 97);
});

test("keyless messages stick to a partition until its batch is sealed", () => {
  const p = new StickyPartitioner(0);
  const batch = { sealed: false };
  assert.equal(p.next(3), 0);
  p.stick(batch);
  assert.equal(p.next(3), 0);
  batch.sealed = true;
  assert.equal(p.next(3), 1);
  p.stick({ sealed: true });
  assert.equal(p.next(3), 2);
  p.stick({ sealed: true });
  assert.equal(p.next(3), 0, "wraps around");
  assert.equal(new StickyPartitioner(5).next(3), 2, "a start past the count is reduced");
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { AppendBuffer, FIRST_CHUNK_BYTES } from "../../src/storage/append-buffer.js";
import { AppendMemory } from "../../src/storage/append-memory.js";

test("a log's chunks start small and double up to the full size", () => {
  const full = 1024 * 1024;
  const chunks = new AppendBuffer(full, new AppendMemory());
  const sizes: number[] = [];
  const fill = (n: number): void => {
    for (let i = 0; i < n; i++) {
      chunks.copyIn(new Uint8Array(1024));
      if (sizes.at(-1) !== chunks.chunk.buf.length || chunks.start === 0) sizes.push(chunks.chunk.buf.length);
    }
  };
  fill(1);
  // 10,000 partitions with a few KiB each must not hold 10,000 full chunks.
  assert.equal(sizes[0], FIRST_CHUNK_BYTES);
  fill(4000);
  const distinct = [...new Set(sizes)];
  assert.deepEqual(distinct.slice(0, 4), [
    FIRST_CHUNK_BYTES,
    2 * FIRST_CHUNK_BYTES,
    4 * FIRST_CHUNK_BYTES,
    8 * FIRST_CHUNK_BYTES,
  ]);
  assert.equal(distinct.at(-1), full);
});

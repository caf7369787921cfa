/**
 * The memory every log of a process shares (append-memory.ts): one bound on all tail caches
 * together, free chunks reused across logs, and chunk sizes that follow how fast a log fills them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { AppendBuffer, FIRST_CHUNK_BYTES, GROW_WITHIN_MS } from "../../src/storage/append-buffer.js";
import { AppendMemory } from "../../src/storage/append-memory.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

function valuesOf(records: Buffer): Map<number, string> {
  const out = new Map<number, string>();
  const cursor = new RecordCursor(records);
  while (cursor.next()) out.set(cursor.offset, cursor.value().toString());
  return out;
}

test("every log's tail cache together stays within the bound: the oldest data of any log goes first, and is read from the file", async () => {
  await withTempDir(async (root) => {
    const memory = new AppendMemory(64 * 1024, 1024 * 1024);
    const options = { appendMemory: memory, retentionCheckMs: 0 };
    const config = testConfig({ segmentBytes: 1024 * 1024 });
    const a = await PartitionLog.open(join(root, "a"), config, undefined, options);
    const b = await PartitionLog.open(join(root, "b"), config, undefined, options);
    try {
      const batch = (tag: string) => makeBatch(tag, 200);
      const size = batch("x").length;
      // Half the bound in a, then three times the bound in b.
      const inA = Math.ceil((32 * 1024) / size);
      for (let i = 0; i < inA; i++) await a.append(batch(`a${i}`));
      assert.ok(a.readNow(0, 1024 * 1024) !== undefined, "a's data is cached while within the bound");
      for (let i = 0; i < Math.ceil((3 * 64 * 1024) / size); i++) await b.append(batch(`b${i}`));

      assert.ok(memory.cachedBytes <= 64 * 1024, `cached ${memory.cachedBytes} bytes`);
      assert.ok(memory.evictedRuns > 0);
      assert.equal(a.readNow(0, 1024 * 1024), undefined, "a's older data left the memory");
      const fromFile = valuesOf((await a.read(0, 1024 * 1024)).records);
      assert.equal(fromFile.get(0), "a0-0", "and is read from the file");
      assert.equal(fromFile.get(inA * 200 - 1), `a${inA - 1}-199`);
      const last = b.logEndOffset - 1;
      const cached = b.readNow(last, 1024 * 1024);
      assert.ok(cached !== undefined, "b's newest data is cached");
      assert.equal(valuesOf(cached.records).get(last), `b${Math.ceil((3 * 64 * 1024) / size) - 1}-199`);
    } finally {
      await a.close();
      await b.close();
    }
    assert.equal(memory.cachedBytes, 0, "closed logs hold nothing in the memory");
  });
});

test("logs sharing a small memory read back what they wrote, whether from memory or the file", async () => {
  type Op = { log: number; batches: number[] } | { log: number; read: number; maxBytes: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      log: fc.integer({ min: 0, max: 2 }),
      batches: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
    }),
    fc.record({
      log: fc.integer({ min: 0, max: 2 }),
      read: fc.double({ min: 0, max: 1, noNaN: true }),
      maxBytes: fc.integer({ min: 1, max: 3000 }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
      await withTempDir(async (root) => {
        // Less than the three logs' own caches together: their chunks come and go through the shared memory.
        const memory = new AppendMemory(3000, 4096);
        const options = {
          appendMemory: memory,
          retentionCheckMs: 0,
          tailCacheBytes: 1536,
          appendChunkBytes: 1024,
        };
        const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 100 });
        const logs = await Promise.all(
          [0, 1, 2].map((i) => PartitionLog.open(join(root, `${i}`), config, undefined, options)),
        );
        const values: string[][] = [[], [], []];
        try {
          for (const o of ops) {
            const log = logs[o.log]!;
            const held = values[o.log]!;
            if ("batches" in o) {
              await Promise.all(
                o.batches.map((count) => {
                  const tag = `l${o.log}m${held.length}`;
                  for (let i = 0; i < count; i++) held.push(`${tag}-${i}`);
                  return log.append(makeBatch(tag, count));
                }),
              );
              continue;
            }
            if (held.length === 0) continue;
            const offset = Math.min(held.length - 1, Math.floor(o.read * held.length));
            const now = log.readNow(offset, o.maxBytes);
            for (const records of [now?.records, (await log.read(offset, o.maxBytes)).records]) {
              if (records === undefined) continue;
              const got = valuesOf(records);
              assert.ok(got.has(offset), `offset ${offset} of log ${o.log}`);
              for (const [at, value] of got) assert.equal(value, held[at], `log ${o.log} offset ${at}`);
            }
            assert.ok(memory.cachedBytes <= 3000);
          }
        } finally {
          await Promise.all(logs.map((log) => log.close()));
        }
        assert.equal(memory.cachedBytes, 0);
      });
    }),
    { numRuns: 40, seed: 1903 },
  );
});

test("a chunk one log let go of is reused by another", () => {
  const memory = new AppendMemory();
  const a = new AppendBuffer(1024 * 1024, memory);
  const b = new AppendBuffer(1024 * 1024, memory);
  a.copyIn(new Uint8Array(100));
  const chunk = a.chunk;
  // Its write done and nothing cached: the log closes, and the chunk is free.
  chunk.outstanding--;
  a.close();
  assert.equal(memory.freeBytes, FIRST_CHUNK_BYTES);
  b.copyIn(new Uint8Array(100));
  assert.equal(b.chunk, chunk);
  assert.equal(memory.freeBytes, 0);
});

test("a log that fills its chunks slowly keeps small ones; one that fills them quickly gets larger ones", () => {
  let now = 0;
  const memory = new AppendMemory();
  const chunks = new AppendBuffer(1024 * 1024, memory, { now: () => now });
  const sizes: number[] = [];
  const fillChunk = (stepMs: number): void => {
    const first = chunks.chunk?.buf;
    do {
      now += stepMs;
      chunks.copyIn(new Uint8Array(1024));
    } while (chunks.chunk.buf === first || chunks.start !== 0);
    sizes.push(chunks.chunk.buf.length);
  };
  chunks.copyIn(new Uint8Array(1024));
  // Filled over 16 s: the next is the first size again.
  for (let i = 0; i < 3; i++) fillChunk(1000);
  assert.deepEqual(sizes, [FIRST_CHUNK_BYTES, FIRST_CHUNK_BYTES, FIRST_CHUNK_BYTES]);
  // Filled within GROW_WITHIN_MS: each twice the last.
  sizes.length = 0;
  for (let i = 0; i < 3; i++) fillChunk(GROW_WITHIN_MS / 1000 / 64);
  assert.deepEqual(sizes, [2 * FIRST_CHUNK_BYTES, 4 * FIRST_CHUNK_BYTES, 8 * FIRST_CHUNK_BYTES]);
  // Slow again: back to the first size.
  sizes.length = 0;
  fillChunk(1000);
  assert.deepEqual(sizes, [FIRST_CHUNK_BYTES]);
});

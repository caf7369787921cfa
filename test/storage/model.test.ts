/**
 * Model-based test: random sequences of appends, reads, reopens and retention runs against a plain
 * array of the values the log should hold.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { RecordCursor } from "../../src/format/record-cursor.js";
import type { LogConfig } from "../../src/storage/config.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, readAll, testConfig, withTempDir } from "./helpers.js";

type Op =
  | { kind: "append"; batches: number[] }
  | { kind: "read"; at: number; maxBytes: number }
  | { kind: "reopen" }
  | { kind: "retain"; bytes: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      batches: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      maxBytes: fc.integer({ min: 1, max: 2000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reopen" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("retain" as const), bytes: fc.integer({ min: 0, max: 4000 }) }),
  },
);

test("a log behaves like an array of records through appends, reads, reopens and retention", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { minLength: 1, maxLength: 25 }),
      fc.constantFrom(0, 100, 4096),
      async (ops, interval) => {
        await withTempDir(async (dir) => {
          let config: LogConfig = testConfig({
            segmentBytes: 1024,
            indexIntervalBytes: interval,
            retentionMs: -1,
          });
          const options = { retentionCheckMs: 0, tailCacheBytes: 1536, appendChunkBytes: 1024 };
          let log = await PartitionLog.open(dir, config, undefined, options);
          const values: string[] = [];
          try {
            for (const o of ops) {
              if (o.kind === "append") {
                const pending = o.batches.map((count) => {
                  const tag = `m${values.length}`;
                  const batch = makeBatch(tag, count);
                  for (let i = 0; i < count; i++) values.push(`${tag}-${i}`);
                  return log.append(batch);
                });
                await Promise.all(pending);
                assert.equal(log.logEndOffset, values.length);
              } else if (o.kind === "read") {
                const start = log.logStartOffset;
                const offset = start + Math.floor(o.at * (values.length - start));
                const { records, highWatermark } = await log.read(offset, o.maxBytes);
                assert.equal(highWatermark, values.length);
                if (offset === values.length) {
                  assert.equal(records.length, 0);
                  continue;
                }
                const cursor = new RecordCursor(records);
                let first = -1;
                while (cursor.next()) {
                  if (first < 0) first = cursor.offset;
                  assert.equal(cursor.value().toString(), values[cursor.offset], `record ${cursor.offset}`);
                }
                assert.ok(first <= offset && cursor.offset >= offset);
              } else if (o.kind === "reopen") {
                await log.close();
                log = await PartitionLog.open(dir, config, undefined, options);
                assert.equal(log.logEndOffset, values.length);
              } else {
                config = { ...config, retentionBytes: o.bytes };
                log.updateConfig(config);
                await log.enforceRetention();
              }
            }
            const all = await readAll(log);
            assert.equal(all.length, values.length - log.logStartOffset);
            for (const r of all) assert.equal(r.value, values[r.offset]);
          } finally {
            await log.close();
          }
        });
      },
    ),
    { numRuns: 40, seed: 4242 },
  );
});

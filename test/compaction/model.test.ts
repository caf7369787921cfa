import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { PartitionLog } from "../../src/storage/partition-log.js";
import {
  compactConfig,
  compactModel,
  firstFrom,
  keyedBatch,
  type Put,
  readAll,
  type StoredRecord,
  segmentBases,
  T0,
  withTempDir,
} from "./helpers.js";

const RETENTION_MS = 1000;

type Op =
  | { t: "append"; records: { key: number; value: string | null }[] }
  | { t: "compact"; advanceMs: number }
  | { t: "reopen" };

const recordArb = fc.record({
  key: fc.integer({ min: 0, max: 9 }),
  value: fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      t: fc.constant("append" as const),
      records: fc.array(recordArb, { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant("compact" as const),
      advanceMs: fc.integer({ min: 0, max: 2500 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: "reopen" as const }) },
);

/** Every offset from the log start to the high watermark reads from the next record that survived. */
async function checkFetchFromEveryOffset(
  log: PartitionLog,
  expected: readonly StoredRecord[],
): Promise<void> {
  let i = 0;
  for (let o = log.logStartOffset; o < log.highWatermark; o++) {
    while (i < expected.length && expected[i]!.offset < o) i++;
    const want = i < expected.length ? expected[i]!.offset : null;
    assert.equal(await firstFrom(log, o), want, `fetch from ${o}`);
  }
}

/**
 * Runs `ops` against a real log and the model; after every compaction and reopen the log must read
 * back exactly as the model says.
 */
async function runOps(ops: readonly Op[], maxKeys: number | undefined): Promise<void> {
  await withTempDir(async (dir) => {
    const config = compactConfig({ deleteRetentionMs: RETENTION_MS });
    const options = maxKeys === undefined ? {} : { compactionMaxKeys: maxKeys };
    let log = await PartitionLog.open(dir, config, undefined, options);
    let clock = 0;
    let model: StoredRecord[] = [];
    let next = 0;
    let exact = true;
    try {
      for (const op of ops) {
        if (op.t === "append") {
          const puts: Put[] = op.records.map((r) => ({
            key: `k${r.key}`,
            value: r.value,
            timestampMs: T0 + clock,
          }));
          const ack = await log.append(keyedBatch(puts));
          assert.equal(ack.baseOffset, next);
          for (const p of puts) model.push({ offset: next++, ...p });
        } else if (op.t === "compact") {
          clock += op.advanceMs;
          const bases = await segmentBases(dir);
          await log.compact(T0 + clock);
          const actual = await readAll(log);
          if (exact) {
            model = compactModel(model, bases.at(-1)!, T0 + clock, RETENTION_MS);
            assert.deepEqual(actual, model);
          } else {
            // A key map too small for all keys compacts less; it must never lose a latest value.
            assertKeepsLatest(actual, model, T0 + clock);
            model = actual;
          }
        } else {
          await log.close();
          log = await PartitionLog.open(dir, config, undefined, options);
          assert.equal(log.logEndOffset, next, "reopen keeps the log end");
          assert.deepEqual(await readAll(log), model, "reopen reads the same");
        }
        if (maxKeys !== undefined) exact = false;
      }
      assert.deepEqual(await readAll(log), model);
      await checkFetchFromEveryOffset(log, model);
      await log.close();
      log = await PartitionLog.open(dir, config, undefined, options);
      assert.deepEqual(await readAll(log), model, "the compacted log reopens as it was");
      await checkFetchFromEveryOffset(log, model);
    } finally {
      await log.close();
    }
  });
}

/** Every key's newest record in `before` is still in `after`, unless it is an expired tombstone. */
function assertKeepsLatest(
  after: readonly StoredRecord[],
  before: readonly StoredRecord[],
  nowMs: number,
): void {
  const latest = new Map<string | null, StoredRecord>();
  for (const r of before) latest.set(r.key, r);
  const have = new Map(after.map((r) => [r.offset, r]));
  for (const r of latest.values()) {
    const expired = r.value === null && nowMs - r.timestampMs > RETENTION_MS;
    if (!expired) assert.deepEqual(have.get(r.offset), r, `latest record of ${r.key} kept`);
  }
  for (const r of after) assert.ok(before.some((b) => b.offset === r.offset && b.value === r.value));
}

test("compaction keeps exactly the newest record of each key, with its offset; tombstones go after their retention", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 80 }), (ops) => runOps(ops, undefined)),
    { numRuns: 30 },
  );
});

test("with a key map too small for the log, compaction does less but never loses a newest value", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 80 }), (ops) => runOps(ops, 4)),
    { numRuns: 10 },
  );
});

test("a known sequence: rolls, tombstones, an emptied segment, reopen", async () => {
  await withTempDir(async (dir) => {
    const config = compactConfig({ deleteRetentionMs: RETENTION_MS });
    let log = await PartitionLog.open(dir, config);
    try {
      // 40 batches of 3 records over 4 keys: many segments, each key rewritten often.
      for (let i = 0; i < 40; i++) {
        await log.append(
          keyedBatch(
            [0, 1, 2].map((j) => ({ key: `k${(i * 3 + j) % 4}`, value: `v${i * 3 + j}`, timestampMs: T0 })),
          ),
        );
      }
      await log.append(keyedBatch([{ key: "k3", value: null, timestampMs: T0 }]));
      for (let i = 0; i < 12; i++)
        await log.append(keyedBatch([{ key: "k9", value: `x${i}`, timestampMs: T0 }]));
      const bases = await segmentBases(dir);
      assert.ok(bases.length >= 4, "several segments");
      const before = await readAll(log);
      const result = await log.compact(T0 + 10);
      assert.ok(result.recordsRemoved > 0);
      const expected = compactModel(before, bases.at(-1)!, T0 + 10, RETENTION_MS);
      assert.deepEqual(await readAll(log), expected);
      assert.ok(
        expected.some((r) => r.key === "k3" && r.value === null),
        "the tombstone is still there",
      );
      assert.equal(log.logStartOffset, 0, "the log start does not move");
      assert.ok((await segmentBases(dir)).length < bases.length, "emptied segments were removed");

      // After the retention the tombstone goes too.
      const later = await log.compact(T0 + RETENTION_MS + 1);
      assert.ok(later.recordsRemoved >= 1);
      const after = await readAll(log);
      assert.ok(!after.some((r) => r.key === "k3" && r.offset < bases.at(-1)!), "the tombstone is gone");
      await log.close();
      log = await PartitionLog.open(dir, config);
      assert.deepEqual(await readAll(log), after);
      const ack = await log.append(keyedBatch([{ key: "k0", value: "new", timestampMs: T0 }]));
      assert.equal(ack.baseOffset, before.at(-1)!.offset + 1, "offsets are never reused");
    } finally {
      await log.close();
    }
  });
});

import assert from "node:assert/strict";
import { cp, readdir, readFile, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { recordSize } from "../../src/format/batch-header.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { checkBatch } from "../../src/format/validate.js";
import { cleanedIndexPath, cleanedWalPath } from "../../src/storage/compaction/cleaned-segment.js";
import {
  readCheckpoint,
  SWAP_MARKER,
  type SwapPlan,
  writeSwapMarker,
} from "../../src/storage/compaction/swap.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { indexPath, walPath } from "../../src/storage/segment-name.js";
import {
  compactConfig,
  keyedBatch,
  readAll,
  type StoredRecord,
  segmentBases,
  T0,
  withTempDir,
} from "./helpers.js";

const config = compactConfig();

/** Fills a log so that compaction rewrites some segments and empties others, then closes it. */
async function fill(dir: string): Promise<void> {
  const log = await PartitionLog.open(dir, config);
  for (let i = 0; i < 70; i++) {
    // The hot keys are written again at the end, so the segments holding only them empty out;
    // the others each stay, in segments that get rewritten.
    const key = i < 30 || i >= 66 ? `hot${i % 4}` : i % 3 === 0 ? `stay${i}` : `hot${i % 4}`;
    await log.append(keyedBatch([{ key, value: `value-${i}-${"x".repeat(i % 20)}`, timestampMs: T0 }]));
  }
  await log.close();
}

async function contentOf(dir: string, scratch: string): Promise<StoredRecord[]> {
  await rm(scratch, { recursive: true, force: true });
  await cp(dir, scratch, { recursive: true });
  const log = await PartitionLog.open(scratch, config);
  try {
    return await readAll(log);
  } finally {
    await log.close();
  }
}

/** The plan a compaction of `before` into `after` carried out, read off the two directories. */
async function planOf(before: string, after: string): Promise<SwapPlan> {
  const plan: SwapPlan = { replace: [], drop: [], cleanedEnd: await readCheckpoint(after) };
  const kept = new Set(await segmentBases(after));
  const afterNames = new Set(await readdir(after));
  for (const base of await segmentBases(before)) {
    if (!kept.has(base)) {
      plan.drop.push(base);
      continue;
    }
    const a = await readFile(walPath(after, base));
    const b = await readFile(walPath(before, base));
    if (!a.equals(b)) {
      plan.replace.push({ base, index: afterNames.has(indexPath(after, base).split("/").at(-1)!) });
    }
  }
  return plan;
}

/**
 * Lays out the state a crash would leave: `before`'s files, with the new files of the plan as
 * `.cleaned` leftovers, the first `renamed` replacements (and, if `dropped`, the drops) already
 * done, and the marker if `marker`.
 */
async function crashState(
  before: string,
  after: string,
  target: string,
  plan: SwapPlan,
  opts: { marker: boolean; renamed: number; dropped: boolean; halfRenamed?: boolean },
): Promise<void> {
  await rm(target, { recursive: true, force: true });
  await cp(before, target, { recursive: true });
  for (const { base, index } of plan.replace) {
    await cp(walPath(after, base), cleanedWalPath(target, base));
    if (index) await cp(indexPath(after, base), cleanedIndexPath(target, base));
  }
  if (opts.marker) await writeSwapMarker(target, plan);
  for (let i = 0; i < opts.renamed; i++) {
    const { base, index } = plan.replace[i]!;
    await rename(cleanedWalPath(target, base), walPath(target, base));
    // The last one may have its data renamed but not yet its index.
    if (opts.halfRenamed === true && i === opts.renamed - 1) continue;
    if (index) await rename(cleanedIndexPath(target, base), indexPath(target, base));
    else await unlink(indexPath(target, base)).catch(() => {});
  }
  if (opts.dropped) {
    for (const base of plan.drop) {
      await unlink(walPath(target, base));
      await unlink(indexPath(target, base)).catch(() => {});
    }
  }
}

test("a crash at any step of the swap leaves either the old segments or the new ones", async () => {
  await withTempDir(async (root) => {
    const before = join(root, "before");
    const after = join(root, "after");
    const scratch = join(root, "scratch");
    const target = join(root, "target");
    await fill(before);
    await cp(before, after, { recursive: true });
    const log = await PartitionLog.open(after, config);
    const result = await log.compact(T0 + 1);
    await log.close();
    assert.ok(result.segmentsRewritten > 1 && result.segmentsDropped > 0, JSON.stringify(result));

    const old = await contentOf(before, scratch);
    const compacted = await contentOf(after, scratch);
    assert.ok(compacted.length < old.length);
    const plan = await planOf(before, after);
    assert.ok(plan.replace.length > 1 && plan.drop.length > 0);

    const states: {
      name: string;
      marker: boolean;
      renamed: number;
      dropped: boolean;
      halfRenamed?: boolean;
    }[] = [{ name: "new files written, no marker", marker: false, renamed: 0, dropped: false }];
    for (let renamed = 0; renamed <= plan.replace.length; renamed++) {
      states.push({ name: `marker, ${renamed} renamed`, marker: true, renamed, dropped: false });
      if (renamed > 0) {
        states.push({
          name: `marker, ${renamed} renamed, last index not`,
          marker: true,
          renamed,
          dropped: false,
          halfRenamed: true,
        });
      }
    }
    states.push({
      name: "marker, all renamed and dropped",
      marker: true,
      renamed: plan.replace.length,
      dropped: true,
    });

    for (const state of states) {
      await crashState(before, after, target, plan, state);
      const reopened = await PartitionLog.open(target, config);
      try {
        assert.deepEqual(await readAll(reopened), state.marker ? compacted : old, state.name);
        const names = await readdir(target);
        assert.ok(
          !names.some((n) => n.endsWith(".cleaned") || n === SWAP_MARKER),
          `${state.name}: leftovers ${names}`,
        );
        if (state.marker) assert.equal(await readCheckpoint(target), plan.cleanedEnd, state.name);
        // The log goes on from the same end either way.
        const ack = await reopened.append(keyedBatch([{ key: "after-crash", value: "v", timestampMs: T0 }]));
        assert.equal(ack.baseOffset, old.at(-1)!.offset + 1, state.name);
      } finally {
        await reopened.close();
      }
    }
  });
});

test("in-flight reads of a replaced segment finish or retry on the new one", async () => {
  await withTempDir(async (dir) => {
    await fill(dir);
    const log = await PartitionLog.open(dir, config);
    try {
      const expected = await readAll(log);
      // Many reads started just before the swap, at every offset, while the pass runs.
      const reads: Promise<unknown>[] = [];
      const pass = log.compact(T0 + 1);
      for (let round = 0; round < 20; round++) {
        for (let o = 0; o < log.highWatermark; o += 3) reads.push(log.read(o, 256));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await pass;
      const results = await Promise.allSettled(reads);
      const failed = results.filter((r) => r.status === "rejected");
      assert.deepEqual(failed, [], "no read failed");
      // Whatever a read returned is whole records of the old or the new log, never a mix.
      const compacted = await readAll(log);
      assert.ok(compacted.length < expected.length);
      const known = new Map(expected.map((r) => [r.offset, r.value]));
      const cursor = new RecordCursor();
      for (const r of results) {
        if (r.status !== "fulfilled") continue;
        const { records } = r.value as { records: Buffer };
        assert.ok(records.length > 0);
        for (let at = 0; at < records.length; at += recordSize(records, at)) {
          assert.ok(checkBatch(records, at, records.length, 1 << 20) > 0, "whole, valid batches");
        }
        cursor.reset(records);
        while (cursor.next()) assert.equal(cursor.value().toString(), known.get(cursor.offset));
      }
      for (const r of compacted) assert.equal(known.get(r.offset), r.value);
    } finally {
      await log.close();
    }
  });
});

test("a compacted log reopens the same from its data alone (every index file lost)", async () => {
  await withTempDir(async (dir) => {
    await fill(dir);
    let log = await PartitionLog.open(dir, config);
    await log.compact(T0 + 1);
    const compacted = await readAll(log);
    await log.close();
    for (const name of await readdir(dir)) if (name.endsWith(".idx")) await unlink(join(dir, name));
    log = await PartitionLog.open(dir, config);
    try {
      assert.deepEqual(await readAll(log), compacted);
      assert.ok(
        (await readdir(dir)).some((n) => n.endsWith(".idx")),
        "indexes rebuilt",
      );
    } finally {
      await log.close();
    }
    // And once more from the rebuilt indexes.
    log = await PartitionLog.open(dir, config);
    try {
      assert.deepEqual(await readAll(log), compacted);
    } finally {
      await log.close();
    }
  });
});

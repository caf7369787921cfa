/**
 * Zeros in the last segment used to count as the end of the data: a page lost in the middle of it
 * (zeros where batches were, good batches after) cut every batch after the page on the next open.
 * Only a torn tail may be cut: zeros that good batches with following offsets come after are
 * quarantined, and a real torn tail (zeros or garbage to the end) is still cut.
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, recordSize } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "../storage/helpers.js";

const config = testConfig({ segmentBytes: 1024 * 1024, indexIntervalBytes: 300 });
const PAGE = 4096;

/** One segment of `appends` batches of 3 records, closed; returns its path and its batches. */
async function oneSegment(dir: string, appends: number): Promise<{ path: string; data: Buffer }> {
  const log = await PartitionLog.open(dir, config);
  for (let i = 0; i < appends; i++) await log.append(makeBatch(`v${i}`, 3));
  await log.close();
  const wals = (await readdir(dir)).filter((n) => n.endsWith(".wal"));
  assert.equal(wals.length, 1);
  const path = join(dir, wals[0]!);
  return { path, data: await readFile(path) };
}

/** Where each batch of a segment's data starts, and its base offset. */
function batchStarts(data: Buffer): { at: number; base: number }[] {
  const out = [];
  for (let at = 0; at < data.length; at += recordSize(data, at))
    out.push({ at, base: batchBaseOffset(data, at) });
  return out;
}

test("a page of zeros in the middle of the last segment is quarantined, the batches after it kept", async () => {
  await withTempDir(async (dir) => {
    const { path, data } = await oneSegment(dir, 400);
    const end = 1200;
    const starts = batchStarts(data);
    // The page lost starts where a batch does: zeros where a header should be.
    const firstLost = starts.find((b) => b.at >= 2 * PAGE)!;
    const firstAfter = starts.find((b) => b.at >= firstLost.at + PAGE)!;
    const damaged = Buffer.concat([data, Buffer.alloc(3 * PAGE)]); // and the preallocated tail of a crash
    damaged.fill(0, firstLost.at, firstLost.at + PAGE);
    await writeFile(path, damaged);

    const log = await PartitionLog.open(dir, config);
    const q = log.quarantined();
    try {
      assert.equal(log.logEndOffset, end, "nothing after the lost page is cut");
      assert.equal(q.length, 1);
      assert.equal(q[0]!.firstOffset, firstLost.base);
      assert.equal(q[0]!.lastOffset, firstAfter.base - 1);
      assert.equal(q[0]!.position, firstLost.at);
      await assert.rejects(
        log.read(firstLost.base, 1),
        (err: unknown) => err instanceof ConchError && err.code === ErrorCode.CORRUPT_DATA,
      );
      log.updateConfig({ ...log.config, corruptData: "skip" });
      assert.deepEqual(offsetsOf(await readAll(log)), [
        ...range(0, firstLost.base),
        ...range(firstAfter.base, end),
      ]);
      const ack = await log.append(makeBatch("next", 1));
      assert.equal(ack.baseOffset, end);
    } finally {
      await log.close();
    }
    // Sealed by the append's roll (its batches are years old) or not, the range stays quarantined.
    const again = await PartitionLog.open(dir, config);
    try {
      assert.equal(again.logEndOffset, end + 1);
      assert.deepEqual(again.quarantined(), q);
    } finally {
      await again.close();
    }
  });
});

test("zeros from the middle of the last segment to its end are still a torn tail, and cut", async () => {
  await withTempDir(async (dir) => {
    const { path, data } = await oneSegment(dir, 400);
    const cut = batchStarts(data).find((b) => b.at >= 2 * PAGE)!;
    const damaged = Buffer.concat([data, Buffer.alloc(PAGE)]);
    damaged.fill(0, cut.at);
    await writeFile(path, damaged);
    const log = await PartitionLog.open(dir, config);
    try {
      assert.equal(log.logEndOffset, cut.base);
      assert.equal(log.quarantined().length, 0);
    } finally {
      await log.close();
    }
    assert.equal((await stat(path)).size, cut.at);
  });
});

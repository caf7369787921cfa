/**
 * A compaction pass used to fail when it reached a quarantined range (the key map's read got
 * CORRUPT_DATA) or a damaged batch not yet found (the segment filter stopped the pass): one bad
 * batch stopped compaction of the whole partition for good. A segment with damage is now left as
 * it is (its bad bytes never copied into a clean segment as if good), logged, and the pass goes on
 * with the others.
 */
import assert from "node:assert/strict";
import { readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, recordSize } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { compactConfig, keyedBatch, T0, withTempDir } from "../compaction/helpers.js";

const config = compactConfig({ segmentBytes: 2048, indexIntervalBytes: 128 });

/** 60 batches of 2 records over 6 keys, so every segment but the newest has records to remove. */
async function fill(dir: string): Promise<string[]> {
  const log = await PartitionLog.open(dir, config);
  for (let i = 0; i < 60; i++) {
    await log.append(
      keyedBatch([
        { key: `k${i % 6}`, value: `a${i}`, timestampMs: T0 },
        { key: `k${(i + 1) % 6}`, value: `b${i}`, timestampMs: T0 },
      ]),
    );
  }
  await log.close();
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
}

/** Flips a bit inside the third batch of `path`; returns that batch's base offset. */
async function damageThirdBatch(path: string): Promise<number> {
  const bytes = await readFile(path);
  let at = 0;
  for (let i = 0; i < 2; i++) at += recordSize(bytes, at);
  bytes[at + 60] = bytes[at + 60]! ^ 0x04;
  await writeFile(path, bytes);
  return batchBaseOffset(bytes, at);
}

for (const found of ["at open", "by the pass itself"] as const) {
  test(`compaction leaves a segment with damage found ${found} as it is and compacts the others`, async () => {
    await withTempDir(async (dir) => {
      const wals = await fill(dir);
      assert.ok(wals.length >= 4, `${wals.length} segments`);
      const damagedPath = join(dir, wals[1]!);
      const bad = await damageThirdBatch(damagedPath);
      // Without its index the segment is scanned at open; with it, the damage is found on reading.
      if (found === "at open") await unlink(damagedPath.replace(".wal", ".idx"));
      const damagedBytes = await readFile(damagedPath);
      const log = await PartitionLog.open(dir, config);
      try {
        assert.equal(log.quarantined().length, found === "at open" ? 1 : 0);
        const result = await log.compact(T0 + 10);
        assert.ok(result.recordsRemoved > 0, "the other segments were compacted");
        assert.deepEqual(await readFile(damagedPath), damagedBytes, "the damaged segment is untouched");
        const q = log.quarantined();
        assert.equal(q.length, 1);
        assert.equal(q[0]!.firstOffset, bad);
        await assert.rejects(
          log.read(bad, 1),
          (err: unknown) => err instanceof ConchError && err.code === ErrorCode.CORRUPT_DATA,
        );
        const again = await log.compact(T0 + 20);
        assert.equal(again.recordsRemoved, 0, "a second pass runs too, with nothing left to do");
      } finally {
        await log.close();
      }
    });
  });
}

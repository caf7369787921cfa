/**
 * One flipped bit in a closed segment used to cut the log there and delete every later segment on
 * the next open. Damage in a closed segment must delete nothing: the bad batch is quarantined,
 * every other batch stays readable at its offset, and reading the bad range gives CORRUPT_DATA
 * (or skips it with corruptData "skip").
 */
import assert from "node:assert/strict";
import { readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, batchCount, recordSize } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { type AppendResult, PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, testConfig, withTempDir } from "../storage/helpers.js";

const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 });

async function fill(dir: string, appends: number): Promise<{ wals: string[]; acks: AppendResult[] }> {
  const log = await PartitionLog.open(dir, config);
  const acks: AppendResult[] = [];
  for (let i = 0; i < appends; i++) acks.push(await log.append(makeBatch(`v${i}`, 3)));
  await log.close();
  return { wals: (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort(), acks };
}

/** Flips one bit at `back` bytes before the end of `path`; returns the flipped batch's offsets. */
async function flipBit(path: string, back: number): Promise<{ first: number; last: number }> {
  const bytes = await readFile(path);
  const pos = bytes.length - back;
  let at = 0;
  while (at + recordSize(bytes, at) <= pos) at += recordSize(bytes, at);
  const first = batchBaseOffset(bytes, at);
  bytes[pos] = bytes[pos]! ^ 0x10;
  await writeFile(path, bytes);
  return { first, last: first + batchCount(bytes, at) - 1 };
}

async function rejectsWithCorruptData(p: Promise<unknown>): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof ConchError && err.code === ErrorCode.CORRUPT_DATA);
}

test("a flipped bit in a closed segment quarantines that batch and keeps every later segment", async () => {
  await withTempDir(async (dir) => {
    const { wals, acks } = await fill(dir, 150);
    assert.ok(wals.length >= 5, `${wals.length} segments`);
    const bad = await flipBit(join(dir, wals[1]!), 100);
    const log = await PartitionLog.open(dir, config);
    try {
      assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith(".wal")).sort(), wals);
      assert.equal(log.logEndOffset, acks.at(-1)!.lastOffset + 1);
      for (const ack of acks) {
        if (ack.baseOffset === bad.first) {
          await rejectsWithCorruptData(log.read(ack.baseOffset, 1));
          continue;
        }
        const { records } = await log.read(ack.baseOffset, 1);
        assert.equal(batchBaseOffset(records, 0), ack.baseOffset, `offset ${ack.baseOffset}`);
      }
      const q = log.quarantined();
      assert.equal(q.length, 1);
      assert.equal(q[0]!.segment, wals[1]);
      assert.equal(q[0]!.firstOffset, bad.first);
      assert.equal(q[0]!.lastOffset, bad.last);
      // A read that starts before the range stops at it.
      const before = await log.read(bad.first - 3, 1 << 20);
      let at = 0;
      let end = 0;
      for (; at < before.records.length; at += recordSize(before.records, at)) {
        end = batchBaseOffset(before.records, at) + batchCount(before.records, at);
      }
      assert.equal(end, bad.first, "the read stops at the quarantined range");

      log.updateConfig({ ...log.config, corruptData: "skip" });
      const skipped = await log.read(bad.first, 1);
      assert.equal(batchBaseOffset(skipped.records, 0), bad.last + 1, "skip answers with the batch after");
    } finally {
      await log.close();
    }
    // The quarantine persists: the damaged segment keeps no index, so the next open scans it again.
    const again = await PartitionLog.open(dir, config);
    try {
      assert.equal(again.quarantined().length, 1);
      await rejectsWithCorruptData(again.read(bad.first, 1));
    } finally {
      await again.close();
    }
  });
});

test("damage inside a closed segment whose index is trusted is found on read, quarantined, and persists", async () => {
  await withTempDir(async (dir) => {
    const { wals, acks } = await fill(dir, 150);
    const path = join(dir, wals[1]!);
    const size = (await readFile(path)).length;
    // Near the start: the index check at open reads only the tail, so this is found lazily.
    const bad = await flipBit(path, size - 200);
    const log = await PartitionLog.open(dir, config);
    try {
      assert.equal(log.quarantined().length, 0, "not scanned at open");
      await rejectsWithCorruptData(log.read(bad.first, 1));
      assert.equal(log.quarantined().length, 1);
      assert.equal(log.quarantined()[0]!.firstOffset, bad.first);
      for (const ack of acks) {
        if (ack.baseOffset === bad.first) continue;
        const { records } = await log.read(ack.baseOffset, 1);
        assert.equal(batchBaseOffset(records, 0), ack.baseOffset, `offset ${ack.baseOffset}`);
      }
      assert.ok(
        (await readdir(dir)).every((n) => n !== wals[1]!.replace(".wal", ".idx")),
        "the damaged segment's index is removed",
      );
    } finally {
      await log.close();
    }
    const again = await PartitionLog.open(dir, config);
    try {
      assert.equal(again.quarantined().length, 1, "found again at open");
    } finally {
      await again.close();
    }
  });
});

test("a segment file missing from the middle of the log: its offsets are quarantined, later segments kept", async () => {
  await withTempDir(async (dir) => {
    const { wals, acks } = await fill(dir, 150);
    await unlink(join(dir, wals[2]!));
    await unlink(join(dir, wals[2]!.replace(".wal", ".idx")));
    const log = await PartitionLog.open(dir, config);
    try {
      assert.equal(log.logEndOffset, acks.at(-1)!.lastOffset + 1);
      const q = log.quarantined();
      assert.equal(q.length, 1);
      assert.equal(q[0]!.firstOffset, Number(wals[2]!.slice(0, 20)));
      assert.equal(q[0]!.lastOffset, Number(wals[3]!.slice(0, 20)) - 1);
      await rejectsWithCorruptData(log.read(q[0]!.firstOffset, 1));
      const { records } = await log.read(q[0]!.lastOffset + 1, 1);
      assert.equal(batchBaseOffset(records, 0), q[0]!.lastOffset + 1);
    } finally {
      await log.close();
    }
  });
});

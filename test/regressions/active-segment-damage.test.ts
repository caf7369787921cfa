/**
 * Damage a read found in the active (last) segment used to fail the read with CORRUPT_DATA and no
 * more: the range was quarantined only at the next open, so it was not listed (describe, metrics)
 * and reads after it could not skip it. It is quarantined at once now, and nothing is cut: the
 * batches after it stay readable and appends go on at the end.
 */
import assert from "node:assert/strict";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, recordSize } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { type AppendResult, PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "../storage/helpers.js";

const config = testConfig({ segmentBytes: 1024 * 1024, indexIntervalBytes: 300 });

test("damage found on read in the active segment is quarantined at once, without cutting anything", async () => {
  await withTempDir(async (dir) => {
    // No tail cache: every read comes from the file.
    const log = await PartitionLog.open(dir, config, undefined, { tailCacheBytes: 0 });
    try {
      const acks: AppendResult[] = [];
      for (let i = 0; i < 100; i++) acks.push(await log.append(makeBatch(`v${i}`, 3)));
      const wals = (await readdir(dir)).filter((n) => n.endsWith(".wal"));
      assert.equal(wals.length, 1, "one segment: the active one");
      const bad = acks[40]!;
      const { records } = await log.read(0, 1 << 20);
      let position = 0;
      while (batchBaseOffset(records, position) < bad.baseOffset) position += recordSize(records, position);
      const file = await open(join(dir, wals[0]!), "r+");
      const byte = Buffer.alloc(1);
      await file.read(byte, 0, 1, position + 60);
      byte[0] = byte[0]! ^ 0x08;
      await file.write(byte, 0, 1, position + 60);
      await file.close();

      await assert.rejects(
        log.read(bad.baseOffset, 1),
        (err: unknown) => err instanceof ConchError && err.code === ErrorCode.CORRUPT_DATA,
      );
      const q = log.quarantined();
      assert.equal(q.length, 1, "quarantined at once");
      assert.equal(q[0]!.segment, wals[0]);
      assert.equal(q[0]!.firstOffset, bad.baseOffset);
      assert.equal(q[0]!.lastOffset, bad.lastOffset);
      assert.equal(q[0]!.position, position);

      const after = await log.read(bad.lastOffset + 1, 1);
      assert.equal(batchBaseOffset(after.records, 0), bad.lastOffset + 1, "the batch after it is read");
      const ack = await log.append(makeBatch("more", 2));
      assert.equal(ack.baseOffset, 300, "appends go on at the end");
      log.updateConfig({ ...log.config, corruptData: "skip" });
      assert.deepEqual(offsetsOf(await readAll(log)), [
        ...range(0, bad.baseOffset),
        ...range(bad.lastOffset + 1, 302),
      ]);
    } finally {
      await log.close();
    }
    const again = await PartitionLog.open(dir, config);
    try {
      assert.equal(again.logEndOffset, 302, "nothing was cut");
      assert.equal(again.quarantined().length, 1);
    } finally {
      await again.close();
    }
  });
});

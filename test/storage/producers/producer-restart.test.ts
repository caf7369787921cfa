/**
 * The producer table survives a restart: from the snapshot of a clean close, from the log alone
 * when the snapshot is gone, and after SIGKILL; and a failed write forgets the batches it lost.
 */
import assert from "node:assert/strict";
import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PartitionLog } from "../../../src/storage/partition-log.js";
import { PRODUCER_SNAPSHOT_FILE } from "../../../src/storage/producers/producer-snapshot.js";
import { TestFileOps } from "../file-ops-fakes.js";
import { testConfig, withTempDir } from "../helpers.js";
import { runAndKill } from "../kill-writer.js";
import { producerBatch } from "./producer-batches.js";

const WRITER = fileURLToPath(new URL("../fixtures/producer-writer.js", import.meta.url));

/** Appends 12 batches of producer 5 over several segments; returns their base offsets. */
async function fill(dir: string): Promise<number[]> {
  const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 512 }));
  const bases: number[] = [];
  for (let i = 0; i < 12; i++) bases.push((await log.append(producerBatch(5, 0, i * 2))).baseOffset);
  assert.ok(log.segmentCount > 2, "the batches span several segments");
  await log.close();
  return bases;
}

async function retriesAreDuplicates(dir: string, bases: number[]): Promise<void> {
  const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 512 }));
  try {
    const end = log.logEndOffset;
    // The last five batches are remembered.
    for (let i = 7; i < 12; i++) {
      const retry = await log.append(producerBatch(5, 0, i * 2));
      assert.deepEqual(
        retry,
        { baseOffset: bases[i], lastOffset: bases[i]! + 1, duplicate: true },
        `batch ${i}`,
      );
    }
    assert.equal(log.logEndOffset, end, "nothing stored twice");
    assert.equal((await log.append(producerBatch(5, 0, 24))).baseOffset, end, "the next batch follows");
  } finally {
    await log.close();
  }
}

test("after a clean close, retries are still duplicates (snapshot)", async () => {
  await withTempDir(async (dir) => {
    const bases = await fill(dir);
    await retriesAreDuplicates(dir, bases);
  });
});

test("without the snapshot, the producers are replayed from the log", async () => {
  await withTempDir(async (dir) => {
    const bases = await fill(dir);
    await unlink(join(dir, PRODUCER_SNAPSHOT_FILE));
    await retriesAreDuplicates(dir, bases);
  });
});

test("a damaged snapshot is ignored and the log replayed", async () => {
  await withTempDir(async (dir) => {
    const bases = await fill(dir);
    await writeFile(join(dir, PRODUCER_SNAPSHOT_FILE), Buffer.from("CPS1 garbage that fails its CRC"));
    await retriesAreDuplicates(dir, bases);
  });
});

test("after SIGKILL, every acknowledged batch's retry is a duplicate", async () => {
  await withTempDir(async (dir) => {
    const { lines, stderr } = await runAndKill(WRITER, dir, 300, false);
    assert.equal(stderr, "");
    const acks = lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ").map(Number));
    assert.ok(acks.length >= 5, `the writer acknowledged ${acks.length} batches`);
    const log = await PartitionLog.open(
      dir,
      testConfig({ flush: "sync", segmentBytes: 4096, indexIntervalBytes: 512 }),
    );
    try {
      const end = log.logEndOffset;
      // One batch may have been stored without its acknowledgment printed: of the last five the
      // partition remembers, the last four acknowledged are certain.
      for (const [, seq, base] of acks.slice(-4)) {
        const retry = await log.append(producerBatch(42, 0, seq!, 2, `v${seq}`));
        assert.equal(retry.duplicate, true, `sequence ${seq}`);
        assert.equal(retry.baseOffset, base);
      }
      assert.equal(log.logEndOffset, end);
    } finally {
      await log.close();
    }
  });
});

test("a batch whose write failed is appended when retried, not taken for a duplicate", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig(), undefined, { fileOps: ops });
    try {
      await log.append(producerBatch(8, 0, 0));
      ops.failNext = new Error("ENOSPC");
      await assert.rejects(log.append(producerBatch(8, 0, 2)));
      const retry = await log.append(producerBatch(8, 0, 2));
      assert.equal(retry.duplicate, undefined);
      assert.equal(retry.baseOffset, 2);
    } finally {
      await log.close();
    }
  });
});

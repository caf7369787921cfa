/**
 * What a clean close leaves for the next open. When the stop is recorded (the broker's clean-stop
 * manifest), a log whose active segment is small (SCAN_AT_OPEN_BYTES) writes no index, and no new
 * producer snapshot when the next open's replay reads only that segment: the next open reads the
 * segment, and told the stop was clean, fsyncs nothing.
 */
import assert from "node:assert/strict";
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { PartitionLog, SCAN_AT_OPEN_BYTES } from "../../src/storage/partition-log.js";
import {
  PRODUCER_SNAPSHOT_FILE,
  readProducerSnapshot,
} from "../../src/storage/producers/producer-snapshot.js";
import { TestFileOps } from "./file-ops-fakes.js";
import { readAll, testConfig, withTempDir } from "./helpers.js";
import { producerBatch } from "./producers/producer-batches.js";

const CONFIG = testConfig({ segmentBytes: 1024 * 1024 });
const INDEX = "00000000000000000000.idx";

/** Appends `batches` batches of producer 7 (two records each); returns their base offsets. */
async function fill(dir: string, batches: number, valueBytes = 8): Promise<number[]> {
  const log = await PartitionLog.open(dir, CONFIG);
  const bases: number[] = [];
  for (let i = 0; i < batches; i++) {
    const batch = producerBatch(7, 0, i * 2, 2, `v${i}-${"x".repeat(valueBytes)}`);
    bases.push((await log.append(batch)).baseOffset);
  }
  return close(log, bases);
}

let closeOptions = {};
async function close(log: PartitionLog, bases: number[]): Promise<number[]> {
  await log.close(closeOptions);
  assert.equal(log.closedCleanly, true);
  return bases;
}

/** Opens `dir` again; checks its end, its records and that the last batches' retries are duplicates. */
/** Returns the fsyncs the open made. */
async function reopen(dir: string, bases: number[], stoppedCleanly: boolean): Promise<number> {
  const ops = new TestFileOps();
  const log = await PartitionLog.open(dir, CONFIG, undefined, { fileOps: ops }, { stoppedCleanly });
  try {
    const syncsAtOpen = ops.datasyncs.count;
    const end = bases.at(-1)! + 2;
    assert.equal(log.logEndOffset, end);
    assert.equal((await readAll(log)).length, end);
    for (let i = Math.max(0, bases.length - 5); i < bases.length; i++) {
      const retry = await log.append(producerBatch(7, 0, i * 2));
      assert.equal(retry.duplicate, true, `batch ${i}'s retry`);
      assert.equal(retry.baseOffset, bases[i]);
    }
    assert.equal(log.logEndOffset, end, "nothing stored twice");
    return syncsAtOpen;
  } finally {
    await log.close();
  }
}

test("a recorded clean close of a small log leaves no index or snapshot; told so, the open fsyncs nothing", async () => {
  await withTempDir(async (dir) => {
    closeOptions = { recorded: true };
    const bases = await fill(dir, 40);
    const files = await readdir(dir);
    assert.ok(!files.includes(INDEX), `no index: ${files.join(", ")}`);
    assert.ok(!files.includes(PRODUCER_SNAPSHOT_FILE), "no producer snapshot");
    assert.equal(await reopen(dir, bases, true), 0, "nothing fsynced at open");
  });
});

test("the same log opened without the hint is fsynced and scanned as after a crash", async () => {
  await withTempDir(async (dir) => {
    closeOptions = { recorded: true };
    const bases = await fill(dir, 40);
    assert.equal(await reopen(dir, bases, false), 1, "the segment fsynced once at open");
  });
});

test("an unrecorded clean close of a small log leaves its index and snapshot", async () => {
  await withTempDir(async (dir) => {
    closeOptions = {};
    const bases = await fill(dir, 40);
    const files = await readdir(dir);
    assert.ok(files.includes(INDEX), "the index, which says the close was clean");
    assert.equal((await readProducerSnapshot(dir, 1000))?.offset, bases.at(-1)! + 2, "a snapshot at the end");
    assert.equal(await reopen(dir, bases, false), 0, "a clean close's index: nothing fsynced at open");
  });
});

test("a log past SCAN_AT_OPEN_BYTES leaves its index and snapshot even when recorded", async () => {
  await withTempDir(async (dir) => {
    closeOptions = { recorded: true };
    const batches = 40;
    const valueBytes = Math.ceil(SCAN_AT_OPEN_BYTES / batches / 2);
    const bases = await fill(dir, batches, valueBytes);
    const files = await readdir(dir);
    assert.ok(files.includes(INDEX), `the index: ${files.join(", ")}`);
    assert.ok(files.includes(PRODUCER_SNAPSHOT_FILE), "the producer snapshot");
    await reopen(dir, bases, true);
  });
});

test("a small log whose replay would start before its active segment writes its snapshot", async () => {
  await withTempDir(async (dir) => {
    closeOptions = { recorded: true };
    const config = testConfig({ segmentBytes: 2048 });
    const log = await PartitionLog.open(dir, config);
    for (let i = 0; i < 60; i++) await log.append(producerBatch(7, 0, i * 2));
    assert.ok(log.segmentCount > 2, "rolled");
    await log.close();
    // Without the snapshots the rolls wrote, the next open replays from offset 0, over closed segments.
    await unlink(join(dir, PRODUCER_SNAPSHOT_FILE));
    const again = await PartitionLog.open(dir, config, undefined, {}, { stoppedCleanly: true });
    const end = again.logEndOffset;
    await again.close({ recorded: true });
    const snapshot = await readProducerSnapshot(dir, 1000);
    assert.equal(snapshot?.offset, end, "written at the log end");
  });
});

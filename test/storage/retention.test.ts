import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

const DAY = 24 * 60 * 60 * 1000;

async function walCount(dir: string): Promise<number> {
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).length;
}

test("retention by size deletes the oldest closed segments and advances the log start", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 4096, retentionMs: -1, retentionBytes: -1 });
    const log = await PartitionLog.open(dir, config, undefined, { retentionCheckMs: 0 });
    for (let i = 0; i < 200; i++) await log.append(makeBatch(`s${i}`, 3));
    const segments = await walCount(dir);
    assert.equal(await log.enforceRetention(), 0, "no limit, nothing deleted");

    log.updateConfig({ ...config, retentionBytes: 10_000 });
    const deleted = await log.enforceRetention();
    assert.ok(deleted > 0);
    assert.equal(await walCount(dir), segments - deleted);
    assert.ok(log.sizeBytes <= 10_000, `${log.sizeBytes} bytes left`);
    assert.ok(log.logStartOffset > 0);
    const start = log.logStartOffset;
    await assert.rejects(log.read(start - 1, 100), (err: unknown) => {
      return err instanceof ConchError && err.code === ErrorCode.OFFSET_OUT_OF_RANGE;
    });
    assert.deepEqual(offsetsOf(await readAll(log)), range(start, 600));

    log.updateConfig({ ...config, retentionBytes: 0 });
    await log.enforceRetention();
    assert.equal(await walCount(dir), 1, "the active segment is never deleted");
    assert.deepEqual(await log.append(makeBatch("more", 1)), { baseOffset: 600, lastOffset: 600 });
    await log.close();

    const again = await PartitionLog.open(dir, config);
    assert.equal(again.logStartOffset, log.logStartOffset);
    assert.equal(again.logEndOffset, 601);
    await again.close();
  });
});

test("retention by age deletes closed segments whose newest record is too old", async () => {
  await withTempDir(async (dir) => {
    const now = 1_800_000_000_000;
    const config = testConfig({ segmentBytes: 4096, retentionMs: 7 * DAY });
    const log = await PartitionLog.open(dir, config, undefined, { retentionCheckMs: 0 });
    for (let i = 0; i < 80; i++) await log.append(makeBatch(`old${i}`, 3, now - 10 * DAY));
    const oldEnd = log.logEndOffset;
    for (let i = 0; i < 80; i++) await log.append(makeBatch(`new${i}`, 3, now - DAY));
    const deleted = await log.enforceRetention(now);
    assert.ok(deleted > 0);
    assert.ok(log.logStartOffset <= oldEnd, "a segment holding a young record is kept");
    const records = await readAll(log);
    assert.ok(records.every((r) => r.offset >= oldEnd || r.value.startsWith("old")));
    assert.equal(records.at(-1)?.offset, 479);
    assert.equal(await log.enforceRetention(now), 0);
    assert.ok((await log.enforceRetention(now + 7 * DAY)) > 0, "later, the young ones expire too");
    assert.equal(await walCount(dir), 1);
    await log.close();
  });
});

test("retention runs on its own timer", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 4096, retentionBytes: 5000 });
    const log = await PartitionLog.open(dir, config, undefined, { retentionCheckMs: 5 });
    for (let i = 0; i < 100; i++) await log.append(makeBatch(`t${i}`, 3));
    for (let i = 0; i < 400 && log.logStartOffset === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(log.logStartOffset > 0);
    await log.close();
  });
});

import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

async function walNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
}

test("segmentMs rolls an old segment; after a reopen its age counts from its first batch", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 1 << 20, segmentMs: 24 * 60 * 60 * 1000 });
    const log = await PartitionLog.open(dir, config);
    await log.append(makeBatch("a", 1, 1_700_000_000_000)); // a 2023 timestamp
    await log.append(makeBatch("b", 1, 1_700_000_000_000));
    assert.equal((await walNames(dir)).length, 1, "a segment started now is young");
    await log.close();
    const again = await PartitionLog.open(dir, config);
    await again.append(makeBatch("c", 1));
    assert.deepEqual(await walNames(dir), ["00000000000000000000.wal", "00000000000000000002.wal"]);
    await again.close();
  });
});

test("appends larger than a chunk, and larger than a segment, are stored whole", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 1024 });
    const log = await PartitionLog.open(dir, config, undefined, {
      appendChunkBytes: 4096,
      tailCacheBytes: 8192,
    });
    const small = makeBatch("s", 2);
    const big = makeBatch("x".repeat(200), 20); // ~4.6 KB: more than a chunk and a segment
    await log.append(small);
    await log.append(big);
    await log.append(small);
    assert.deepEqual(await walNames(dir), [
      "00000000000000000000.wal",
      "00000000000000000002.wal",
      "00000000000000000022.wal",
    ]);
    const { records } = await log.read(5, 1);
    assert.equal(records.length, big.length);
    assert.deepEqual(records.subarray(17), big.subarray(17));
    await log.close();
    const again = await PartitionLog.open(dir, config, undefined, { tailCacheBytes: 0 });
    assert.deepEqual(offsetsOf(await readAll(again, 1)), range(0, 24));
    const fromFile = await again.read(21, 10);
    assert.equal(fromFile.records.length, big.length, "a whole large batch from the file too");
    await again.close();
  });
});

test("reads, appends, rolls and retention interleaved stay consistent", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 2048, indexIntervalBytes: 128, retentionBytes: 6000 });
    const log = await PartitionLog.open(dir, config, undefined, {
      retentionCheckMs: 0,
      tailCacheBytes: 2048,
      appendChunkBytes: 1024,
    });
    const writes: Promise<unknown>[] = [];
    let checked = 0;
    for (let round = 0; round < 60; round++) {
      for (let i = 0; i < 5; i++) writes.push(log.append(makeBatch(`r${round}.${i}`, 1 + ((round + i) % 3))));
      await writes.at(-4); // let some writes complete while later ones are in flight
      const retention = round % 7 === 0 ? log.enforceRetention() : Promise.resolve(0);
      const start = log.logStartOffset;
      const hw = log.highWatermark;
      if (hw > start) {
        const offset = start + ((round * 7919) % (hw - start));
        try {
          const { records } = await log.read(offset, 300);
          assert.ok(records.length > 0);
          const base = records.readUInt32BE(13);
          const count = records.readUInt32BE(25);
          assert.ok(
            base <= offset && offset < base + count,
            `read(${offset}) returned batch ${base}+${count}`,
          );
          checked++;
        } catch (err) {
          // Retention may delete the segment between the bounds check and the read.
          assert.equal((err as { codeName?: string }).codeName, "OFFSET_OUT_OF_RANGE");
          assert.ok(offset < log.logStartOffset);
        }
      }
      await retention;
    }
    await Promise.all(writes);
    assert.ok(checked > 30, `only ${checked} reads checked`);
    const records = await readAll(log);
    assert.deepEqual(offsetsOf(records), range(log.logStartOffset, log.logEndOffset));
    await log.close();
  });
});

test("a log that goes quiet drops its spare chunks and tail cache, and keeps working", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig(), undefined, {
      trimIntervalMs: 5,
      appendChunkBytes: 4096,
    });
    for (let i = 0; i < 50; i++) await log.append(makeBatch(`q${i}`, 2));
    const before = await readAll(log);
    // Long enough for several quiet ticks.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await readAll(log), before);
    assert.deepEqual(await log.append(makeBatch("after", 1)), { baseOffset: 100, lastOffset: 100 });
    assert.equal((await log.read(100, 1000)).records.readUInt32BE(25), 1);
    await log.close();
  });
});

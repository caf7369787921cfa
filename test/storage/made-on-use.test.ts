import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { BucketCounts, LATENCY_SECONDS_BOUNDS } from "../../src/storage/bucket-counts.js";
import { childPath } from "../../src/storage/child-path.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { indexPath, walPath } from "../../src/storage/segment-name.js";
import { testConfig, withTempDir } from "./helpers.js";

// What a log needs only now and then (its compaction pass's objects, its histograms' buckets, its
// long-poll task) is made when first used; these check that what it does is unchanged by that.

test("paths in a directory are those path.join gives", () => {
  for (const dir of ["/data/topics/t", "/data/topics/t/", "relative/dir", "/"]) {
    assert.equal(childPath(dir, "7"), join(dir, "7"));
    assert.equal(walPath(dir, 42), join(dir, "00000000000000000042.wal"));
    assert.equal(indexPath(dir, 42), join(dir, "00000000000000000042.idx"));
  }
  assert.equal(childPath("", "x"), "x");
});

test("a histogram never observed adds nothing and reads as zeros; observed, it counts", () => {
  const total = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  total.add(new BucketCounts(LATENCY_SECONDS_BOUNDS));
  assert.equal(total.count, 0);
  assert.deepEqual([...total.counts], new Array(LATENCY_SECONDS_BOUNDS.length + 1).fill(0));
  const one = new BucketCounts(LATENCY_SECONDS_BOUNDS);
  one.observe(0.0002);
  one.observe(20);
  total.add(one);
  total.add(one);
  assert.equal(total.count, 4);
  assert.equal(total.counts[2], 2); // (0.0001, 0.00025]
  assert.equal(total.counts[LATENCY_SECONDS_BOUNDS.length], 2); // +Inf
  assert.ok(Math.abs(total.sum - 40.0004) < 1e-9);
});

test("a compacting log closed before its first pass runs none when asked after", async () => {
  await withTempDir(async (dir) => {
    const logDir = join(dir, "0");
    const config = testConfig({ cleanupPolicy: "compact", segmentBytes: 4096, compactionDelayMs: 60_000 });
    const log = await PartitionLog.open(logDir, config);
    const builder = new BatchBuilder({ slabBytes: 64 * 1024 });
    // The same key over several segments: a pass would rewrite the closed ones.
    while (log.segmentCount < 4) {
      builder.add("value", "same-key", Date.now());
      await log.append(Buffer.from(builder.finish()));
    }
    await log.close();
    const names = (await readdir(logDir)).sort();
    const before = await Promise.all(names.map((n) => readFile(join(logDir, n))));
    const result = await log.compact();
    assert.equal(result.segmentsRewritten, 0);
    assert.equal(result.recordsRemoved, 0);
    assert.deepEqual((await readdir(logDir)).sort(), names);
    const after = await Promise.all(names.map((n) => readFile(join(logDir, n))));
    assert.deepEqual(after, before);
  });
});

test("a compacting log compacts on request when it never ran a pass before", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ cleanupPolicy: "compact", segmentBytes: 4096, compactionDelayMs: 60_000 });
    const log = await PartitionLog.open(join(dir, "0"), config);
    try {
      const builder = new BatchBuilder({ slabBytes: 64 * 1024 });
      while (log.segmentCount < 4) {
        builder.add("value", "same-key", Date.now());
        await log.append(Buffer.from(builder.finish()));
      }
      const result = await log.compact();
      assert.ok(result.recordsRemoved > 0, `records removed: ${result.recordsRemoved}`);
    } finally {
      await log.close();
    }
  });
});

/**
 * The on-disk layout of docs/format.md ("On disk"), byte for byte: segment names, a `.wal` holding
 * the stamped batches back to back, and the `.idx` entries with their running-maximum timestamps.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { testConfig, withTempDir } from "./helpers.js";

const T = 1_700_000_000_000;

function hello(timestampMs: number): Buffer {
  const b = new BatchBuilder();
  b.add("hello", null, timestampMs);
  return Buffer.from(b.finish());
}

test("golden: segment files, stamped batches and index entries", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 512, indexIntervalBytes: 100 }));
    // 83-byte batches at positions 0, 83, 166, 249, 332, 415; the seventh does not fit in 512 bytes.
    const deltas = [0, 5, 2, 9, 1, 3, 4];
    for (const d of deltas) await log.append(hello(T + d));
    await log.close();

    // A clean close leaves the active segment's index too (the next open reads it, not the segment).
    assert.deepEqual((await readdir(dir)).sort(), [
      "00000000000000000000.idx",
      "00000000000000000000.wal",
      "00000000000000000006.idx",
      "00000000000000000006.wal",
      "producers.snapshot",
    ]);
    // No idempotent producer: the snapshot is its header, at the log end (7), with no producers.
    assert.equal(
      (await readFile(join(dir, "producers.snapshot"))).toString("hex"),
      "43505331 8316bb19 0000000000000007 00000000".replaceAll(" ", ""),
    );
    const idx = await readFile(join(dir, "00000000000000000000.idx"));
    const expected = [
      "00000000 00000000 17979cfe362a0000", // offset 0 at byte 0, max T
      "00000002 000000a6 17979cfe36764b40", // offset 2 at byte 166 (>= 100 past 0), max T+5 (batch 1's)
      "00000004 0000014c 17979cfe36b35440", // offset 4 at byte 332 (>= 100 past 166), max T+9 (batch 3's)
    ];
    assert.equal(idx.toString("hex"), expected.join("").replaceAll(" ", ""));

    const wal = await readFile(join(dir, "00000000000000000000.wal"));
    assert.equal(wal.length, 6 * 83, "closed segment cut to its data");
    for (let i = 0; i < 6; i++) {
      const stored = wal.subarray(i * 83, (i + 1) * 83);
      const original = hello(T + deltas[i]!);
      assert.equal(stored.readUInt32BE(13), i, `batch ${i} stamped with its base offset`);
      assert.deepEqual(stored.subarray(0, 9), original.subarray(0, 9));
      assert.deepEqual(stored.subarray(17), original.subarray(17), "nothing else changed");
    }
    const next = await readFile(join(dir, "00000000000000000006.wal"));
    assert.equal(next.length, 83);
    assert.equal(next.readUInt32BE(13), 6);
  });
});

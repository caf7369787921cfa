/**
 * Creating partitions must not fill the disk: a partition that holds no data reserves no blocks
 * (it used to reserve a 16 MiB chunk at creation, so 48 empty partitions took 768 MiB). The first
 * reservation comes once a partition holds 1 MiB, so busy partitions keep preallocation.
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { testConfig, withTempDir } from "../storage/helpers.js";

const MiB = 1024 * 1024;
const PARTITIONS = 48;
const WAL = "00000000000000000000.wal";

async function allocated(path: string): Promise<number> {
  return (await stat(path)).blocks * 512;
}

test("empty partitions reserve no disk blocks, nor does a little data", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 256 * MiB, maxBatchBytes: 8 * MiB });
    const logs: PartitionLog[] = [];
    try {
      for (let p = 0; p < PARTITIONS; p++) logs.push(await PartitionLog.open(join(dir, String(p)), config));
      let total = 0;
      for (let p = 0; p < PARTITIONS; p++) total += await allocated(join(dir, String(p), WAL));
      assert.ok(
        total <= PARTITIONS * 64 * 1024,
        `${PARTITIONS} empty partitions hold ${total} bytes of disk`,
      );

      // Reopened empty partitions stay empty too.
      await logs[1]!.close();
      logs[1] = await PartitionLog.open(join(dir, "1"), config);
      assert.ok((await allocated(join(dir, "1", WAL))) <= 64 * 1024, "a reopened empty partition");

      const b = new BatchBuilder({ slabBytes: 64 * 1024 });
      b.add("first", null, 1_700_000_000_000);
      await logs[0]!.append(Buffer.from(b.finish()));
      const path = join(dir, "0", WAL);
      await logs[0]!.flush();
      // A little data reserves nothing ahead either (block-reserve.ts): blocks come as it is written.
      const busy = await allocated(path);
      assert.ok(busy <= 64 * 1024, `the first data took ${busy} bytes of disk`);
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });
});

/**
 * A time lookup inside a batch walked each record by its key and value sizes as the v1 layout reads
 * them, so in a batch of extended records (a null key or value: all-ones sizes; headers: a block
 * after the value) it stepped to the wrong place and answered the batch's last offset. Records with
 * headers and null keys are what every Kafka producer and `send({ headers })` write, and kafkajs,
 * librdkafka and `conch consume --from-time` look offsets up by time.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { testConfig, withTempDir } from "../storage/helpers.js";

const T = 1_700_000_000_000;

test("a time lookup finds the right record inside a batch of extended records", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    try {
      const b = new BatchBuilder();
      b.add("a", null, T + 1, { trace: "x" }); // null key, headers: the extended layout
      b.add(null, "k", T + 9); // a tombstone
      b.add("c", null, T + 3, [["h", null]]);
      b.add("d", "k2", T + 7);
      await log.append(Buffer.from(b.finish()));
      assert.equal(await log.offsetForTimestamp(T), 0);
      assert.equal(await log.offsetForTimestamp(T + 2), 1);
      assert.equal(await log.offsetForTimestamp(T + 9), 1);
      assert.equal(await log.offsetForTimestamp(T + 10), null);
    } finally {
      await log.close();
    }
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { keyedBatch, T0, withTempDir } from "./helpers.js";

function keyless(value: string): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add(value, null, T0);
  return Buffer.from(b.finish());
}

/** key -> [offset, value] of every record fetched from the start. */
async function fetchAll(broker: Broker, topic: string): Promise<[number, string | null, string][]> {
  const out: [number, string | null, string][] = [];
  let offset = 0;
  const cursor = new RecordCursor();
  for (;;) {
    const r = await broker.fetch({
      topic: topic,
      partition: 0,
      offset: offset,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      minBytes: 1,
    });
    if (r.records.length === 0) return out;
    cursor.reset(r.records);
    while (cursor.next()) {
      if (cursor.offset < offset) continue;
      out.push([cursor.offset, cursor.key()?.toString() ?? null, cursor.value().toString()]);
      offset = cursor.offset + 1;
    }
  }
}

test("a topic's cleanup.policy reaches its logs at create, alter and reopen, and compaction honours it", async () => {
  await withTempDir(async (dataDir) => {
    let broker = await Broker.open({ dataDir });
    try {
      await broker.createTopic("state", 1, {
        "cleanup.policy": "compact",
        "segment.bytes": "1024",
        "delete.retention.ms": "5000",
        "min.compaction.lag.ms": "0",
      });
      const log = broker.partition("state", 0);
      assert.equal(log.config.cleanupPolicy, "compact");
      assert.equal(log.config.deleteRetentionMs, 5000);
      await assert.rejects(broker.produce("state", 0, keyless("x"), "leader"), (err: unknown) => {
        return (err as { code?: number }).code === ErrorCode.INVALID_BATCH;
      });
      for (let i = 0; i < 60; i++) {
        await broker.produce(
          "state",
          0,
          keyedBatch([{ key: `user-${i % 3}`, value: `${"v".repeat(30)}${i}`, timestampMs: T0 }]),
          "leader",
        );
      }
      await log.compact(T0);
      const records = await fetchAll(broker, "state");
      assert.ok(records.length < 60);
      for (const k of [0, 1, 2]) {
        const newest = records.filter((r) => r[1] === `user-${k}`).at(-1);
        assert.equal(newest?.[2], `${"v".repeat(30)}${57 + k}`, `newest value of user-${k}`);
      }

      await broker.alterTopic("state", { "cleanup.policy": "delete" });
      assert.equal(broker.partition("state", 0).config.cleanupPolicy, "delete");
      await broker.produce("state", 0, keyless("fine now"), "leader");
      await broker.alterTopic("state", { "cleanup.policy": "compact,delete" });
      await broker.close();

      broker = await Broker.open({ dataDir });
      assert.equal(broker.partition("state", 0).config.cleanupPolicy, "compact,delete");
      assert.equal(broker.describeTopic("state").configs["cleanup.policy"], "compact,delete");
      const again = await fetchAll(broker, "state");
      assert.deepEqual(again.slice(0, records.length), records, "the compacted log reopens as it was");
    } finally {
      await broker.close();
    }
  });
});

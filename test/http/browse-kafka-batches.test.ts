/** The message browser reads Kafka batches stored as they came (gzip ones too) beside Conch ones. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { StoringBatches } from "../../src/kafka/convert/storing-batches.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { call, startHttp } from "./helpers.js";

interface Browse {
  messages: { offset: number; key: { data: string } | null; value: { data: string } }[];
}

test("the message browser shows the records of stored Kafka batches, by offset and by key", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("kb", 1);
  const b = new BatchBuilder();
  b.add("native", "n", Date.now());
  await broker.produce("kb", 0, Buffer.from(b.finish()), "leader");
  const k = new RecordBatchBuilder();
  k.add(Date.now(), Buffer.from("alice"), Buffer.from("from kafka"));
  k.add(Date.now(), null, Buffer.from("keyless"));
  const stored = new StoringBatches().fromKafka(k.finish({ baseOffset: 0 }), 1 << 20, Date.now());
  await broker.produce("kb", 0, Buffer.from(stored), "leader");
  const all = (await call(base, "GET", "/api/v1/topics/kb/partitions/0/messages")).json as unknown as Browse;
  assert.deepEqual(
    all.messages.map((m) => [m.offset, m.key?.data ?? null, m.value.data]),
    [
      [0, "n", "native"],
      [1, "alice", "from kafka"],
      [2, null, "keyless"],
    ],
  );
  const byKey = (await call(base, "GET", "/api/v1/topics/kb/partitions/0/messages?key=alice"))
    .json as unknown as Browse;
  assert.deepEqual(
    byKey.messages.map((m) => m.offset),
    [1],
  );
});

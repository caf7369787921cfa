/**
 * Kafka's acks=-1 is the broker's acks "all" (docs/kafka.md): on a replicated partition it is
 * answered once the follower has the records, and NOT_ENOUGH_REPLICAS below min.insync.replicas.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KafkaErrorCode } from "../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { KafkaFrontEnd } from "../../src/kafka/server/kafka-front-end.js";
import { produceRequest, RawKafkaClient, readProduceResponse } from "../kafka/server/kafka-harness.js";
import { role, startCluster } from "./replica-cluster.js";

const TOPIC = "kafka-replicated";

function batchOf(...values: string[]): Buffer {
  const b = new RecordBatchBuilder();
  for (const v of values) b.add(1_700_000_000_000, Buffer.from(`k-${v}`), Buffer.from(v));
  return b.finish({ baseOffset: 0 });
}

test("Kafka acks=-1 waits for the follower, and is NOT_ENOUGH_REPLICAS below min.insync.replicas", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { minInsyncReplicas: () => 2 });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const leader = cluster.node(1);
  const kafka = new KafkaFrontEnd(leader.server, leader.broker);
  const { port } = await kafka.listen(0, "127.0.0.1");
  const c = await RawKafkaClient.connect(port);
  t.after(() => c.destroy());
  const follower = cluster.node(2).broker.partition(TOPIC, 0);
  for (let i = 0; i < 5; i++) {
    c.send(produceRequest(i + 1, TOPIC, 0, batchOf(`a${i}`, `b${i}`), -1));
    const [[, , error, base]] = readProduceResponse(await c.next()) as [[string, number, number, number]];
    assert.equal(error, KafkaErrorCode.NONE);
    assert.ok(
      follower.logEndOffset > base + 1,
      `the follower has ${follower.logEndOffset}, the ack said ${base + 1}`,
    );
  }
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2], [1]), [1]);
  c.send(produceRequest(9, TOPIC, 0, batchOf("short"), -1));
  assert.deepEqual(readProduceResponse(await c.next()), [[TOPIC, 0, KafkaErrorCode.NOT_ENOUGH_REPLICAS, -1]]);
});

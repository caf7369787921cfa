/**
 * Cluster mode wired end to end: three `conch broker` processes on one etcd replicate a topic
 * (replication factor 3, min.insync.replicas 2). A Kafka client finds the leader through Metadata,
 * produces with acks=-1 (kafkajs) and reads the same records back (librdkafka); every replica
 * holds the same batches.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { hasPythonModule } from "../kafka/server/kafka-harness.js";
import { BrokerProcess } from "./broker-process.js";
import { createReplicatedTopic } from "./cluster-metadata.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";
import { readWithLibrdkafka } from "./kafka-reader.js";
import { replicaCrcs } from "./replica-logs.js";

const TOPIC = "ledger";

describe("replicated partitions across three broker processes", { skip: skipWithoutEtcd }, () => {
  let etcd: EtcdCluster;
  const brokers: BrokerProcess[] = [];
  before(async () => {
    etcd = await EtcdCluster.start(1);
    for (let id = 1; id <= 3; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "repl" }));
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd?.stop();
  });

  test("acks=-1 through a Kafka client, read back from the leader, replicas byte-identical", async (t) => {
    if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
    await createReplicatedTopic(brokers[0]?.port ?? 0, TOPIC, 2);

    const kafka = new Kafka({
      brokers: brokers.map((b) => `127.0.0.1:${b.kafkaPort}`),
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100 },
    });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const acked = new Map<string, string>(); // "partition/offset" -> value
    try {
      for (let round = 0; round < 20; round++) {
        for (const partition of [0, 1]) {
          const messages = Array.from({ length: 10 }, (_, i) => ({
            partition,
            value: `p${partition}-r${round}-m${i}`,
          }));
          const [res] = await producer.send({ topic: TOPIC, acks: -1, messages });
          assert.equal(res?.errorCode, 0);
          const base = Number(res?.baseOffset);
          for (const [i, m] of messages.entries()) acked.set(`${partition}/${base + i}`, m.value);
        }
      }
    } finally {
      await producer.disconnect();
    }
    assert.equal(acked.size, 400);

    const seen = await readWithLibrdkafka(
      brokers.map((b) => `127.0.0.1:${b.kafkaPort}`).join(","),
      TOPIC,
      [200, 200],
    );
    assert.deepEqual(new Map([...seen].sort()), new Map([...acked].sort()));

    // Every replica holds the same batches, with the same offsets, up to what was acknowledged.
    await Promise.all(brokers.map((b) => b.kill()));
    for (const partition of [0, 1]) {
      const crcs = await replicaCrcs(
        brokers.map((b) => b.dataDir),
        TOPIC,
        partition,
        200,
      );
      assert.equal(crcs[0]?.length, 20, "20 batches of 10 on the first replica");
      assert.deepEqual(crcs[1], crcs[0]);
      assert.deepEqual(crcs[2], crcs[0]);
    }
  });
});

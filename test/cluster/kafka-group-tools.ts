/**
 * kafkajs as the cluster group tests' producer and admin: an RF 3 topic, rounds produced with
 * acks -1 (retried while leaders move), and the group's committed offsets through its coordinator.
 */
import type { TestContext } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import type { GroupCluster } from "./group-cluster.js";
import { roundValues } from "./group-cluster.js";

export interface KafkaGroupTools {
  readonly kafka: Kafka;
  readonly bootstrap: string[];
  produce(round: string): Promise<string[]>;
  committed(): Promise<number[]>;
}

export async function kafkaGroupTools(
  t: TestContext,
  cluster: GroupCluster,
  topic: string,
  group: string,
  partitions: number,
): Promise<KafkaGroupTools> {
  const bootstrap = cluster.brokers.map((b) => `127.0.0.1:${b.kafkaPort}`);
  const kafka = new Kafka({
    clientId: "cg-test",
    brokers: bootstrap,
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 3 }],
    waitForLeaders: true,
  });
  const producer = kafka.producer();
  await producer.connect();
  t.after(() => producer.disconnect());
  return {
    kafka,
    bootstrap,
    async produce(round) {
      const values = roundValues(round, partitions);
      await producer.send({ topic, acks: -1, messages: values });
      return values.map((v) => v.value);
    },
    async committed() {
      const res = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      return (res[0]?.partitions ?? [])
        .sort((x, y) => x.partition - y.partition)
        .map((x) => Number(x.offset));
    },
  };
}

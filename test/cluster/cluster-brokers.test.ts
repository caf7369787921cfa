import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { TestClient } from "../server/helpers.js";
import { BrokerProcess } from "./broker-process.js";
import { metadataFrom, metadataUntil } from "./cluster-metadata.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";

describe("three conch broker processes in cluster mode on one etcd", { skip: skipWithoutEtcd }, () => {
  let etcd: EtcdCluster;
  const brokers: BrokerProcess[] = [];
  before(async () => {
    etcd = await EtcdCluster.start(1);
    for (let id = 1; id <= 3; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "e2e" }));
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd?.stop();
  });

  test("a topic created through one broker is described with its leaders by every broker, native and Kafka", async () => {
    const [b1, b2, b3] = brokers;
    assert.ok(b1 && b2 && b3);
    const c = await TestClient.connect(b2.port);
    await c.handshake();
    p.decodeCreateTopicResponse(
      await c.call((id) =>
        p.encodeCreateTopicRequest(id, {
          topic: "orders",
          partitions: 3,
          configs: { "replication.factor": "3", "min.insync.replicas": "2" },
        }),
      ),
    );
    await assert.rejects(
      c
        .call((id) =>
          p.encodeCreateTopicRequest(id, {
            topic: "wide",
            partitions: 1,
            configs: { "replication.factor": "4" },
          }),
        )
        .then(p.decodeCreateTopicResponse),
      (err: { code: number }) => err.code === ErrorCode.INVALID_REPLICATION_FACTOR,
    );
    c.destroy();

    const m = await metadataFrom(b3.port);
    assert.equal(m.brokerId, 3);
    assert.ok([1, 2, 3].includes(m.controllerId));
    assert.deepEqual(
      m.brokers.map((b) => [b.id, b.port]),
      brokers.map((b) => [b.brokerId, b.port]),
    );
    const orders = m.topics.find((t) => t.name === "orders");
    assert.equal(orders?.partitions.length, 3);
    assert.deepEqual(
      new Set(orders?.partitions.map((x) => x.leaderId)),
      new Set([1, 2, 3]),
      "one leader per broker",
    );
    for (const part of orders?.partitions ?? []) {
      assert.equal(part.replicas.length, 3);
      assert.deepEqual(part.isr, part.replicas);
      assert.equal(part.leaderEpoch, 0);
    }

    const kafka = new Kafka({
      brokers: [`127.0.0.1:${b1.kafkaPort}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      assert.deepEqual(
        cluster.brokers.map((b) => [b.nodeId, b.port]).sort(),
        brokers.map((b) => [b.brokerId, b.kafkaPort]),
      );
      assert.equal(cluster.controller, m.controllerId);
      const { topics } = await admin.fetchTopicMetadata({ topics: ["orders"] });
      const byPartition = new Map(topics[0]?.partitions.map((x) => [x.partitionId, x.leader]));
      for (const part of orders?.partitions ?? [])
        assert.equal(byPartition.get(part.partition), part.leaderId);
    } finally {
      await admin.disconnect();
    }
  });

  test("SIGKILL of a leader's broker: the others' Metadata names a new leader from the ISR at epoch 1", async () => {
    const before = await metadataFrom(brokers[0]?.port ?? 0, ["orders"]);
    const p0 = before.topics[0]?.partitions[0];
    assert.ok(p0);
    const victim = brokers.find((b) => b.brokerId === p0.leaderId);
    const witness = brokers.find((b) => b.brokerId !== p0.leaderId);
    assert.ok(victim && witness);
    await victim.kill();
    const m = await metadataUntil(
      witness.port,
      (x) => x.topics.find((t) => t.name === "orders")?.partitions[0]?.leaderId !== p0.leaderId,
      8000,
    );
    const now = m.topics.find((t) => t.name === "orders")?.partitions[0];
    const expectedIsr = p0.isr.filter((id) => id !== victim.brokerId);
    assert.equal(now?.leaderId, expectedIsr[0]);
    assert.equal(now?.leaderEpoch, 1);
    assert.deepEqual(now?.isr, expectedIsr);
    assert.ok(!m.brokers.some((b) => b.id === victim.brokerId), "the dead broker is no longer listed");
  });
});

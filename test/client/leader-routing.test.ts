/**
 * The SDK against three in-process brokers whose Metadata describes a cluster (a stand-in for
 * the etcd-backed view, so that leaders can be moved by the test): requests go to each
 * partition's leader, and follow a partition whose leader's broker died to its new leader.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type {
  ClusterBroker,
  ClusterMetadata,
  ClusterPartition,
  PartitionFigures,
} from "../../src/broker/cluster-metadata.js";
import { createClient } from "../../src/client/conch.js";
import { checkRouting, endOffsetOn, readAll, valuesOf } from "./leader-routing-check.js";
import { RealBroker } from "./real-broker.js";

/** The cluster as every broker's Metadata tells it; the test changes it as a controller would. */
class FakeCluster {
  live: RealBroker[] = [];
  ids = new Map<RealBroker, number>();
  leaders = new Map<string, number[]>();
  epoch = 0;

  viewFor(brokerId: number): ClusterMetadata {
    return {
      brokerId,
      controllerId: () => 1,
      brokers: (): ClusterBroker[] =>
        this.live.map((b) => ({
          id: this.ids.get(b) ?? -1,
          host: "127.0.0.1",
          port: b.port,
          kafkaHost: "",
          kafkaPort: 0,
        })),
      topicNames: () => [...this.leaders.keys()],
      partitions: (topic): ClusterPartition[] | undefined =>
        this.leaders.get(topic)?.map((leaderId, partition) => ({
          partition,
          leaderId,
          leaderEpoch: this.epoch,
          replicas: [leaderId],
          isr: [leaderId],
        })),
      topicConfigs: (topic) => (this.leaders.has(topic) ? {} : undefined),
      // As a leader answers DescribeTopic at scope "led here": its own logs' figures.
      askLeader: async (leaderId, topic): Promise<PartitionFigures[]> => {
        const leader = this.live.find((b) => this.ids.get(b) === leaderId)?.broker;
        if (leader === null || leader === undefined) throw new Error(`broker ${leaderId} is gone`);
        return leader.describeTopic(topic).partitions.map((p) => {
          const view = leader.partitionView(topic, p.partition);
          return {
            partition: p.partition,
            logStartOffset: p.logStartOffset,
            logEndOffset: view.logEndOffset,
            highWatermark: p.highWatermark,
            sizeBytes: view.sizeBytes,
            segments: view.segmentCount,
            quarantined: [],
          };
        });
      },
      askGroups: () => Promise.reject(new Error("not asked in these tests")),
    };
  }
}

async function threeBrokers(t: Parameters<typeof RealBroker.start>[0]): Promise<FakeCluster> {
  const cluster = new FakeCluster();
  for (let id = 1; id <= 3; id++) {
    const b = await RealBroker.start(t);
    cluster.live.push(b);
    cluster.ids.set(b, id);
  }
  return cluster;
}

function openCluster(cluster: FakeCluster): void {
  for (const b of cluster.live) {
    const broker = b.broker;
    assert.ok(broker);
    broker.cluster = cluster.viewFor(cluster.ids.get(b) ?? -1);
  }
}

test("the SDK sends each partition's produce and fetch requests to its leader, from one bootstrap address", async (t) => {
  const cluster = await threeBrokers(t);
  // Every broker has the partitions (as replicas would); Metadata names one leader per partition.
  for (const b of cluster.live) await b.broker?.createTopic("spread", 6);
  const leaders = [1, 2, 3, 3, 2, 1];
  cluster.leaders.set("spread", leaders);
  openCluster(cluster);
  const conch = createClient({ brokers: [cluster.live[0]?.address ?? ""] });
  try {
    await checkRouting(
      conch,
      "spread",
      leaders,
      cluster.live.map((b) => ({ brokerId: cluster.ids.get(b) ?? -1, port: b.port })),
      25,
    );
  } finally {
    await conch.close();
  }
});

test("after its leader's broker dies, a partition's producer and consumer go on at the new leader from the same offset", async (t) => {
  const cluster = await threeBrokers(t);
  const [b1, b2, b3] = cluster.live;
  assert.ok(b1 && b2 && b3);
  // Brokers 2 and 3 both hold the first 10 records, as a leader and its in-sync follower would.
  for (const b of [b2, b3]) {
    await b.broker?.createTopic("moved", 1);
    const direct = createClient({ brokers: [b.address] });
    const producer = direct.producer();
    await Promise.all(valuesOf(0, 0, 10).map((value) => producer.send("moved", { partition: 0, value })));
    await direct.close();
  }
  await b1.broker?.createTopic("moved", 1);
  cluster.leaders.set("moved", [2]);
  openCluster(cluster);

  const conch = createClient({
    brokers: [b1.address],
    requestTimeoutMs: 5000,
    reconnectBackoffMaxMs: 200,
  });
  try {
    const consumer = conch.consumer({ partitions: [{ topic: "moved", partition: 0, from: "earliest" }] });
    const it = consumer[Symbol.asyncIterator]();
    const read: string[] = [];
    while (read.length < 10) {
      const next = await it.next();
      assert.ok(!next.done);
      read.push(next.value.value.toString());
    }
    assert.deepEqual(read, valuesOf(0, 0, 10));

    // Broker 2 dies; the controller makes broker 3 the leader and drops broker 2 from the list.
    await b2.stop();
    cluster.live = [b1, b3];
    cluster.leaders.set("moved", [3]);
    cluster.epoch = 1;

    const producer = conch.producer({ deliveryTimeoutMs: 20_000 });
    const started = performance.now();
    const acked = await Promise.all(
      valuesOf(0, 10, 20).map((value) => producer.send("moved", { partition: 0, value })),
    );
    const ms = performance.now() - started;
    assert.deepEqual(
      acked.map((r) => r.offset),
      Array.from({ length: 10 }, (_, i) => 10 + i),
      "stored after the records the new leader already had",
    );
    assert.equal(await endOffsetOn(b3.port, "moved", 0), 20);
    assert.ok(ms < 5000, `producing resumed after ${Math.round(ms)} ms`);

    while (read.length < 20) {
      const next = await it.next();
      assert.ok(!next.done);
      read.push(next.value.value.toString());
    }
    assert.deepEqual(read, valuesOf(0, 0, 20), "the consumer went on from offset 10 on the new leader");
    await consumer.close();
    await producer.close();
  } finally {
    await conch.close();
  }
  // Nothing was read from a broker that does not lead: a fresh read of the topic sees the same.
  const again = createClient({ brokers: [b1.address] });
  try {
    assert.deepEqual((await readAll(again, "moved", 20)).get(0), valuesOf(0, 0, 20));
  } finally {
    await again.close();
  }
});

test("a produce that reaches a leader before it has taken up a topic the metadata names is retried, not failed", async (t) => {
  const cluster = await threeBrokers(t);
  const [b1, b2] = cluster.live;
  assert.ok(b1 && b2);
  // The cluster's metadata names broker 2 as the leader of a topic just created; broker 2 has not
  // made its log yet (it learns of the topic a moment later, as a replica does from etcd).
  cluster.leaders.set("fresh", [2]);
  openCluster(cluster);
  let asked = 0;
  const view = b1.broker?.cluster;
  assert.ok(view);
  const partitions = view.partitions;
  // The second Metadata request is the one the refused produce asks for: broker 2 hosts it by then.
  view.partitions = (topic) => {
    if (topic === "fresh" && ++asked === 2) void b2.broker?.createTopic("fresh", 1);
    return partitions(topic);
  };
  const conch = createClient({ brokers: [b1.address] });
  try {
    const producer = conch.producer({ deliveryTimeoutMs: 10_000 });
    const res = await producer.send("fresh", { partition: 0, value: "first" });
    assert.equal(res.offset, 0);
    assert.ok(asked >= 2, "the produce was refused once (UNKNOWN_TOPIC) and retried");
    assert.equal(await endOffsetOn(b2.port, "fresh", 0), 1);
    await producer.close();
  } finally {
    await conch.close();
  }
});

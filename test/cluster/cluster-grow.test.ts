/**
 * Growing a cluster on real processes (etcd and `conch broker`s): a partition reassigned onto a
 * freshly started broker while a producer (acks all) and a consumer run; a topic gaining
 * partitions; the preferred leader's return after a restart; SIGTERM moving leaderships before
 * the broker exits (docs/cluster.md, "Growing a cluster").
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { createClient } from "../../src/client/conch.js";
import type * as p from "../../src/protocol/index.js";
import { BrokerProcess } from "./broker-process.js";
import { createReplicatedTopic, metadataFrom, metadataUntil } from "./cluster-metadata.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";
import { replicaCrcs } from "./replica-logs.js";

const CLUSTER = "grow";

function partitionOf(
  m: p.MetadataResponse,
  topic: string,
  partition: number,
): p.MetadataPartitionEntry | undefined {
  return m.topics.find((t) => t.name === topic)?.partitions[partition];
}

/** kafkajs sends one record at a time with acks=-1 and retries, recording "offset" -> value of each ack. */
function produceUntilStopped(producer: Producer, topic: string, partition: number) {
  const acked = new Map<string, string>();
  let producing = true;
  let n = 0;
  const done = (async () => {
    while (producing) {
      const value = `v${n++}`;
      try {
        const [res] = await producer.send({ topic, acks: -1, messages: [{ value, partition }] });
        acked.set(String(res?.baseOffset), value);
      } catch {
        // Not acknowledged: nothing is promised for it.
      }
    }
  })();
  return {
    acked,
    async stop(): Promise<void> {
      producing = false;
      await done;
    },
  };
}

async function until(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("growing a cluster: reassignment, new partitions, preferred leaders, controlled shutdown", {
  skip: skipWithoutEtcd,
}, () => {
  let etcd: EtcdCluster;
  const brokers: BrokerProcess[] = [];
  const start = async (brokerId: number, dataDir?: string): Promise<BrokerProcess> => {
    const b = await BrokerProcess.start({
      brokerId,
      etcd: etcd.endpoints,
      clusterId: CLUSTER,
      ...(dataDir === undefined ? {} : { dataDir }),
    });
    const i = brokers.findIndex((x) => x.brokerId === brokerId);
    if (i >= 0) brokers[i] = b;
    else brokers.push(b);
    return b;
  };
  const byId = (id: number): BrokerProcess => {
    const b = brokers.find((x) => x.brokerId === id);
    assert.ok(b, `broker ${id}`);
    return b;
  };
  const kafkaFor = () =>
    new Kafka({
      brokers: brokers.map((b) => `127.0.0.1:${b.kafkaPort}`),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 3000,
      retry: { retries: 50, initialRetryTime: 50, maxRetryTime: 250, factor: 0.2 },
    });

  before(async () => {
    etcd = await EtcdCluster.start(1);
    for (let id = 1; id <= 3; id++) await start(id);
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd?.stop();
  });

  test("a partition moves onto a new 4th broker under acks=all load: nothing acknowledged lost, the consumer sees it all, replicas identical, the old replica's data removed", async () => {
    const topic = "moving";
    await createReplicatedTopic(byId(1).port, topic, 1);
    const kafka = kafkaFor();
    const producer = kafka.producer({ allowAutoTopicCreation: false, metadataMaxAge: 500 });
    await producer.connect();
    const load = produceUntilStopped(producer, topic, 0);
    const conch = createClient({ brokers: [`127.0.0.1:${byId(2).port}`] });
    const seen = new Set<string>();
    const consumer = conch.consumer({ topics: [topic], from: "earliest" });
    const consuming = (async () => {
      for await (const msg of consumer) seen.add(`${msg.offset}:${msg.value.toString()}`);
    })();
    try {
      await until(() => load.acked.size >= 100, 20_000, "100 acknowledgements");
      const b4 = await start(4);
      const before = partitionOf(await metadataFrom(b4.port, [topic]), topic, 0);
      assert.ok(before);
      const leaving = before.leaderId;
      // The leader leaves: its leadership must move before it is dropped.
      const target = [4, ...before.replicas.filter((id) => id !== leaving)];
      await conch.admin().reassignPartitions([{ topic, partition: 0, replicas: target }]);
      const ackedAtMove = load.acked.size;
      const moved = await metadataUntil(
        b4.port,
        (m) => {
          const x = partitionOf(m, topic, 0);
          return x !== undefined && x.replicas.join() === target.join() && x.isr.length === 3;
        },
        30_000,
      );
      const now = partitionOf(moved, topic, 0);
      assert.deepEqual(now?.replicas, target, "the old replica is gone from the replicas");
      assert.notEqual(now?.leaderId, leaving);
      // Broker 4, the first replica, is the preferred leader: it leads once in sync a while.
      await metadataUntil(b4.port, (m) => partitionOf(m, topic, 0)?.leaderId === 4, 15_000);
      await until(() => load.acked.size >= ackedAtMove + 100, 20_000, "acknowledgements after the move");
      await load.stop();
      const end = Math.max(...[...load.acked.keys()].map(Number)) + 1;
      const expected = [...load.acked].map(([offset, value]) => `${offset}:${value}`);
      await until(
        () => expected.every((x) => seen.has(x)),
        20_000,
        "the consumer to see every acknowledged record",
      );
      await producer.disconnect();
      await consumer.close();
      await consuming;
      // Every replica stopped, then read from disk: the target's logs identical, the old one's empty.
      await Promise.all(brokers.map((b) => b.kill()));
      const [onOld, ...onTarget] = await replicaCrcs(
        [byId(leaving).dataDir, ...target.map((id) => byId(id).dataDir)],
        topic,
        0,
        end,
      );
      assert.deepEqual(onOld, [], `broker ${leaving}'s replica data is removed`);
      assert.ok((onTarget[0]?.length ?? 0) > 0);
      for (const r of onTarget) assert.deepEqual(r, onTarget[0], "replicas byte-identical");
    } finally {
      await load.stop();
      await producer.disconnect().catch(() => {});
      await consumer.close().catch(() => {});
      await conch.close();
      for (const b of [...brokers])
        if (b.child.exitCode !== null || b.child.signalCode !== null) await start(b.brokerId, b.dataDir);
    }
  });
});

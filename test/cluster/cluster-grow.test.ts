/**
 * Growing a cluster on real processes (etcd and `conch broker`s): a partition reassigned onto a
 * freshly started broker while a producer (acks all) and a consumer run; a topic gaining
 * partitions; the preferred leader's return after a restart; SIGTERM moving leaderships before
 * the broker exits; a replica moved off a broker while it was down removed when it returns
 * (docs/cluster.md, "Growing a cluster").
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import { openEtcdStore } from "../../src/cluster/etcd/etcd3-store.js";
import type { MetaEvent } from "../../src/cluster/etcd/meta-store.js";
import { MetadataKeys } from "../../src/cluster/metadata-keys.js";
import { type PartitionRecord, parsePartitionRecord } from "../../src/cluster/metadata-records.js";
import type * as p from "../../src/protocol/index.js";
import { failoverKafka, produceUntilStopped } from "./acks-all-load.js";
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
  const kafkaFor = () => failoverKafka(brokers.map((b) => b.kafkaPort));

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
    // The leader hosts the partition once it acknowledges (the SDK does not retry UNKNOWN_TOPIC,
    // which a broker answers for the moment between the topic's creation and its first role).
    await until(() => load.acked.size >= 1, 20_000, "the first acknowledgement");
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
  test("a topic gains partitions in the cluster: each new one gets replicas over the live brokers, a leader, and takes acks=all writes", async () => {
    const topic = "widening";
    await createReplicatedTopic(byId(1).port, topic, 2);
    const conch = createClient({ brokers: [`127.0.0.1:${byId(3).port}`] });
    try {
      await conch.admin().createPartitions(topic, 5);
    } finally {
      await conch.close();
    }
    const m = await metadataFrom(byId(2).port, [topic]);
    const parts = m.topics.find((t) => t.name === topic)?.partitions ?? [];
    assert.equal(parts.length, 5);
    for (const x of parts) {
      assert.equal(new Set(x.replicas).size, 3);
      assert.ok(x.leaderId >= 0);
      assert.deepEqual([...x.isr].sort(), [...x.replicas].sort());
    }
    const producer = kafkaFor().producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const [res] = await producer.send({ topic, acks: -1, messages: [{ value: "on-4", partition: 4 }] });
      assert.equal(res?.baseOffset, "0");
    } finally {
      await producer.disconnect();
    }
  });

  test("the preferred leader leads again once it is back in the ISR after a restart", async () => {
    const topic = "preferred";
    await createReplicatedTopic(byId(1).port, topic, 1);
    const before = partitionOf(await metadataFrom(byId(1).port, [topic]), topic, 0);
    assert.ok(before);
    const preferred = before.replicas[0] as number;
    assert.equal(before.leaderId, preferred);
    const victim = byId(preferred);
    const witness = brokers.find((b) => b.brokerId !== preferred) as BrokerProcess;
    await victim.kill();
    await metadataUntil(witness.port, (m) => partitionOf(m, topic, 0)?.leaderId !== preferred, 10_000);
    await start(preferred, victim.dataDir);
    const back = await metadataUntil(
      witness.port,
      (m) => partitionOf(m, topic, 0)?.leaderId === preferred,
      20_000,
    );
    assert.equal(partitionOf(back, topic, 0)?.leaderId, preferred);
    assert.ok(
      (partitionOf(back, topic, 0)?.leaderEpoch ?? 0) >= before.leaderEpoch + 2,
      "moved away, then back",
    );
  });

  test("SIGTERM: the broker's leaderships and ISR places move to other brokers before it leaves the cluster", async () => {
    const topic = "handover";
    await createReplicatedTopic(byId(1).port, topic, 4);
    const m = await metadataFrom(byId(1).port, [topic]);
    const victim = byId(m.topics.find((t) => t.name === topic)?.partitions[0]?.leaderId ?? -1);
    // The metadata changes in etcd's order: every record must be off the victim before its key goes.
    const store = await openEtcdStore(etcd.endpoints);
    const keys = new MetadataKeys(CLUSTER);
    const events: MetaEvent[] = [];
    const snapshot = await store.getPrefix(keys.root);
    const revision = snapshot.revision;
    const watch = await store.watchPrefix(keys.root, revision + 1, {
      events: (e) => events.push(...e),
      failed: () => {},
    });
    try {
      await victim.terminate();
      assert.equal(victim.child.exitCode, 0);
      const gone = keys.broker(victim.brokerId);
      await until(
        () => events.some((e) => e.type === "delete" && e.key === gone),
        10_000,
        "the broker key to go",
      );
      // The records as they stood when the broker's key went: the snapshot, then the changes before.
      const records = new Map<number, PartitionRecord>();
      const put = (key: string, value: string): void => {
        if (!key.startsWith(keys.partitionsOf(topic))) return;
        const partition = Number(key.slice(keys.partitionsOf(topic).length));
        records.set(partition, parsePartitionRecord(topic, partition, value));
      };
      for (const e of snapshot.entries) put(e.key, e.value);
      const hosting = [...records.values()].filter((r) => r.replicas.includes(victim.brokerId)).length;
      let rewritten = 0;
      for (const e of events) {
        if (e.type === "delete" && e.key === gone) break;
        if (e.type === "put" && e.entry.key.startsWith(keys.partitionsOf(topic))) rewritten++;
        if (e.type === "put") put(e.entry.key, e.entry.value);
      }
      assert.equal(records.size, 4);
      assert.ok(rewritten >= hosting, `${rewritten} record changes for ${hosting} partitions on the broker`);
      for (const r of records.values()) {
        assert.notEqual(r.leaderId, victim.brokerId);
        assert.ok(!r.isr.includes(victim.brokerId), `${topic}/${r.partition} ISR ${r.isr}`);
      }
    } finally {
      await watch.cancel();
      store.close();
    }
    await start(victim.brokerId, victim.dataDir);
  });
  test("a replica moved off a broker while it was down has its data removed when the broker comes back", async () => {
    const topic = "away";
    await createReplicatedTopic(byId(1).port, topic, 1);
    const before = partitionOf(await metadataFrom(byId(1).port, [topic]), topic, 0);
    assert.ok(before);
    const stray = byId(before.replicas.find((id) => id !== before.leaderId) ?? -1);
    const newcomer = brokers.find((b) => !before.replicas.includes(b.brokerId)) as BrokerProcess;
    const producer = kafkaFor().producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      // acks=-1 with all three in the ISR: the stray replica has every record.
      for (let i = 0; i < 10; i++)
        await producer.send({ topic, acks: -1, messages: [{ value: `r${i}`, partition: 0 }] });
    } finally {
      await producer.disconnect();
    }
    await stray.kill();
    const [held] = await replicaCrcs([stray.dataDir], topic, 0, 10);
    assert.equal(held?.length, 10, "the stray replica held the records");
    const target = [...before.replicas.filter((id) => id !== stray.brokerId), newcomer.brokerId];
    const conch = createClient({ brokers: [`127.0.0.1:${byId(1).port}`] });
    try {
      await conch.admin().reassignPartitions([{ topic, partition: 0, replicas: target }]);
    } finally {
      await conch.close();
    }
    await metadataUntil(
      byId(1).port,
      (m) =>
        partitionOf(m, topic, 0)?.replicas.join() === target.join() &&
        partitionOf(m, topic, 0)?.isr.length === 3,
      30_000,
    );
    const back = await start(stray.brokerId, stray.dataDir);
    // A planned stop waits for its role changes, the removal among them.
    await back.terminate();
    const [left] = await replicaCrcs([stray.dataDir], topic, 0, 10);
    assert.deepEqual(left, [], "its data is gone");
    await start(stray.brokerId, stray.dataDir);
  });
});

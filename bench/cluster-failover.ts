/**
 * Failover of partition leadership, measured on real processes: etcd (1 member) and three
 * `conch broker` processes in cluster mode (lease TTL 2 s), a topic of 6 partitions with RF 3.
 * Each round SIGKILLs a broker that leads partitions and times, from the kill, until etcd holds a
 * new leader record for every partition it led (seen through a watch). The broker is then
 * restarted and, standing in for the replica side, the ISRs are put back whole, so that every round
 * starts from a healthy cluster. Needs `etcd` (apt-get install etcd-server).
 *
 *   npm run build && node dist/bench/cluster-failover.js [rounds=10]
 */
import { openEtcdStore } from "../src/cluster/etcd/etcd3-store.js";
import { MetadataKeys } from "../src/cluster/metadata-keys.js";
import { encodePartitionRecord, parsePartitionRecord } from "../src/cluster/metadata-records.js";
import * as p from "../src/protocol/index.js";
import { BrokerProcess } from "../test/cluster/broker-process.js";
import { EtcdCluster } from "../test/cluster/etcd-harness.js";
import { TestClient } from "../test/server/helpers.js";

const rounds = Number(process.argv[2] ?? 10);
const TOPIC = "failover";
const etcd = await EtcdCluster.start(1);
const store = await openEtcdStore(etcd.endpoints);
const keys = new MetadataKeys("bench");
const brokers: BrokerProcess[] = [];
try {
  for (let id = 1; id <= 3; id++)
    brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "bench" }));
  const c = await TestClient.connect(brokers[0]?.port ?? 0);
  await c.handshake();
  p.decodeCreateTopicResponse(
    await c.call((id) =>
      p.encodeCreateTopicRequest(id, { topic: TOPIC, partitions: 6, configs: { "replication.factor": "3" } }),
    ),
  );
  c.destroy();
  const times: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const snap = await store.getPrefix(keys.partitionsOf(TOPIC));
    const records = snap.entries.map((e) =>
      parsePartitionRecord(TOPIC, Number(e.key.split("/").pop()), e.value),
    );
    const counts = new Map<number, number>();
    for (const r of records) counts.set(r.leaderId, (counts.get(r.leaderId) ?? 0) + 1);
    const victimId = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1;
    const victimIndex = brokers.findIndex((b) => b.brokerId === victimId);
    const victim = brokers[victimIndex];
    if (victim === undefined) throw new Error(`no broker ${victimId}`);
    const led = new Set(records.filter((r) => r.leaderId === victimId).map((r) => r.partition));
    let killedAt = 0;
    const moved = new Promise<number>((resolve) => {
      void store.watchPrefix(keys.partitionsOf(TOPIC), snap.revision + 1, {
        events: (events) => {
          for (const e of events) {
            if (e.type !== "put") continue;
            const r = parsePartitionRecord(TOPIC, Number(e.entry.key.split("/").pop()), e.entry.value);
            if (r.leaderId !== victimId) led.delete(r.partition);
          }
          if (led.size === 0) resolve(performance.now());
        },
        failed: () => {},
      });
    });
    killedAt = performance.now();
    await victim.kill();
    const ms = (await moved) - killedAt;
    times.push(ms);
    process.stdout.write(
      `round ${round}: broker ${victimId} killed, ${counts.get(victimId)} leaderships moved in ${ms.toFixed(0)} ms\n`,
    );
    brokers[victimIndex] = await BrokerProcess.start({
      brokerId: victimId,
      etcd: etcd.endpoints,
      clusterId: "bench",
      dataDir: victim.dataDir,
    });
    // The replica side would grow the ISR back once the returning broker caught up.
    const now = await store.getPrefix(keys.partitionsOf(TOPIC));
    for (const e of now.entries) {
      const r = parsePartitionRecord(TOPIC, Number(e.key.split("/").pop()), e.value);
      await store.txn(
        [{ key: e.key, target: "mod", revision: e.modRevision }],
        [{ type: "put", key: e.key, value: encodePartitionRecord({ ...r, isr: r.replicas }) }],
      );
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  process.stdout.write(
    `SIGKILL -> new leader records in etcd, ${rounds} rounds, TTL 2 s: min ${at(0).toFixed(0)} ms, median ${at(0.5).toFixed(0)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms\n`,
  );
} finally {
  await Promise.all(brokers.map((b) => b.remove()));
  store.close();
  await etcd.stop();
}

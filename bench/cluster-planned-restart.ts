/**
 * The produce pause of a planned restart (SIGTERM: controlled shutdown) against a crash (SIGKILL),
 * measured in one run on real processes: etcd (1 member) and three `conch broker`s (lease TTL 2 s),
 * one partition with replication factor 3 and min.insync.replicas 2, kafkajs producing one record
 * at a time with acks=-1 and retries (request timeout 1.5 s, metadata max age 500 ms). Rounds
 * alternate SIGTERM and SIGKILL of the partition's leader; each times the longest gap between two
 * acknowledgements from the signal until 20 acknowledgements after it, then restarts the broker on
 * its data and waits until it is in the ISR and leads again (preferred leader). Needs `etcd`.
 *
 *   npm run bench:cluster-restart [rounds = 6]
 */
import { loadavg } from "node:os";
import { failoverKafka, longestPause, produceUntilStopped } from "../test/cluster/acks-all-load.js";
import { BrokerProcess } from "../test/cluster/broker-process.js";
import { createReplicatedTopic, metadataUntil } from "../test/cluster/cluster-metadata.js";
import { EtcdCluster } from "../test/cluster/etcd-harness.js";

const rounds = Number(process.argv[2] ?? 6);
const TOPIC = "restart";
const etcd = await EtcdCluster.start(1);
const brokers: BrokerProcess[] = [];
const pauses: Record<"SIGTERM" | "SIGKILL", number[]> = { SIGTERM: [], SIGKILL: [] };
try {
  for (let id = 1; id <= 3; id++)
    brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "restart" }));
  await createReplicatedTopic(brokers[0]?.port ?? 0, TOPIC, 1);
  const kafka = failoverKafka(brokers.map((b) => b.kafkaPort));
  const producer = kafka.producer({ allowAutoTopicCreation: false, metadataMaxAge: 500 });
  await producer.connect();
  const load = produceUntilStopped(producer, TOPIC, 0);
  let preferred = -1;
  for (let round = 1; round <= rounds; round++) {
    const signal = round % 2 === 1 ? "SIGTERM" : "SIGKILL";
    const live = brokers.find((b) => b.child.exitCode === null) as BrokerProcess;
    // A healthy start: full ISR, the preferred leader leading, some acknowledgements on it.
    const m = await metadataUntil(
      live.port,
      (x) => {
        const part = x.topics.find((t) => t.name === TOPIC)?.partitions[0];
        return part !== undefined && part.isr.length === 3 && part.leaderId === part.replicas[0];
      },
      30_000,
    );
    const part = m.topics.find((t) => t.name === TOPIC)?.partitions[0];
    preferred = part?.leaderId ?? -1;
    const acksBefore = load.ackTimes.length;
    while (load.ackTimes.length < acksBefore + 50) await new Promise((r) => setTimeout(r, 10));
    const index = brokers.findIndex((b) => b.brokerId === preferred);
    const victim = brokers[index] as BrokerProcess;
    const at = performance.now();
    const acksAtSignal = load.ackTimes.length;
    const gone = signal === "SIGTERM" ? victim.terminate() : victim.kill();
    const until = performance.now() + 30_000;
    while (load.ackTimes.length < acksAtSignal + 20 && performance.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    const last = load.ackTimes.at(-1) ?? at;
    await gone;
    const exitMs = performance.now() - at;
    const pause = longestPause(load.ackTimes, at, last);
    pauses[signal].push(pause);
    console.log(
      `round ${round}: ${signal} of leader ${preferred}: longest gap between acks ${pause.toFixed(0)} ms (process gone after ${exitMs.toFixed(0)} ms; load average ${loadavg()[0]?.toFixed(2)})`,
    );
    brokers[index] = await BrokerProcess.start({
      brokerId: preferred,
      etcd: etcd.endpoints,
      clusterId: "restart",
      dataDir: victim.dataDir,
    });
  }
  await load.stop();
  await producer.disconnect();
  const median = (xs: number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  console.log(
    `SIGTERM gaps ${pauses.SIGTERM.map((x) => x.toFixed(0)).join(", ")} ms (median ${median(pauses.SIGTERM).toFixed(0)}); ` +
      `SIGKILL gaps ${pauses.SIGKILL.map((x) => x.toFixed(0)).join(", ")} ms (median ${median(pauses.SIGKILL).toFixed(0)}); ` +
      `${load.acked.size} records acknowledged`,
  );
} finally {
  await Promise.all(brokers.map((b) => b.remove()));
  await etcd.stop();
}

/**
 * SIGKILL of a partition's leader under acks=all load from a Kafka client (kafkajs, acks=-1, one
 * record per send, retries), measured on real processes: etcd (1 member) and three `conch broker`
 * processes (lease TTL 2 s), one partition with replication factor 3 and min.insync.replicas 2.
 * Each round kills the leader and times from the kill to the first acknowledgement of a send begun
 * after it; the broker is restarted on its data and rejoins the ISR before the next round. At the
 * end every acknowledged record is read back (librdkafka) and the replicas compared batch for batch.
 * Needs `etcd` (apt-get install etcd-server) and python3-confluent-kafka.
 *
 *   npm run build && node dist/bench/cluster-kill-under-load.js [rounds=10] [kafkajs|sdk]
 *
 * With "sdk" our SDK produces (acks "all") and our consumer reads back, instead of kafkajs and
 * librdkafka.
 *
 * With TRACE_DIR=<dir>, every broker's log and the rounds' events are written there (JSON lines
 * with wall-clock times; merge them by time to follow a failover step by step).
 */
import { runFailoverRounds } from "../test/cluster/failover-rounds.js";

const rounds = Number(process.argv[2] ?? 10);
const client = process.argv[3] === "sdk" ? "sdk" : "kafkajs";
const r = await runFailoverRounds({
  client,
  maxRounds: rounds,
  budgetMs: Number.POSITIVE_INFINITY,
  log: (line) => process.stdout.write(`${line}\n`),
  ...(process.env.TRACE_DIR === undefined ? {} : { traceDir: process.env.TRACE_DIR }),
});
let lost = 0;
for (const [offset, value] of r.acked) if (r.read.get(offset) !== value) lost++;
const sameReplicas = r.replicas.every((x) => JSON.stringify(x) === JSON.stringify(r.replicas[0]));
const sorted = [...r.resumeMs].sort((a, b) => a - b);
const mid = (sorted.length - 1) / 2;
const median = ((sorted[Math.floor(mid)] ?? 0) + (sorted[Math.ceil(mid)] ?? 0)) / 2;
process.stdout.write(
  `${client}, ${r.resumeMs.length} rounds: first ack after the kill median ${median.toFixed(0)} ms, ` +
    `min ${(sorted[0] ?? 0).toFixed(0)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms; ` +
    `${r.acked.size} records acknowledged, ${lost} not read back at their offset; ` +
    `replicas ${sameReplicas ? "identical" : "DIFFERENT"} (${r.replicas[0]?.length ?? 0} batches)\n`,
);
if (lost > 0 || !sameReplicas) process.exitCode = 1;

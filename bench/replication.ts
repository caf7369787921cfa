// `node dist/bench/replication.js`: the produce rate with acks "all" against acks "leader" on a
// partition replicated twice (RF 2, min.insync.replicas 2), two brokers in two processes on
// loopback, in the same run, after a warm-up round, alternating (leader, all) three times so that
// a drift of the machine hits both. One producer (the SDK) keeps WINDOW sendBatch calls of BATCH records of RECORD_BYTES
// in flight for SECONDS per round; the rate counts acknowledged records. See docs/performance/cluster.md,
// "Replication".
import { type ChildProcess, fork } from "node:child_process";
import { resolve } from "node:path";
import type { BrokerEndpoint, PartitionRole } from "../src/cluster/roles.js";
import { createClient } from "../src/index.js";

const SECONDS = Number(process.env.REPL_SECONDS ?? 10);
const RECORD_BYTES = Number(process.env.REPL_RECORD_BYTES ?? 1024);
const BATCH = 100;
const WINDOW = Number(process.env.REPL_WINDOW ?? 8);
const TOPIC = "replicated";
const CHILD = resolve(import.meta.dirname, "replication-broker.js");

function start(id: number): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(CHILD, [String(id)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((ok, fail) => {
    child.once("error", fail);
    child.once("message", (msg: { port: number }) => ok({ child, port: msg.port }));
  });
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((ok) => child.once("message", () => ok()));
}

async function round(address: string, acks: "leader" | "all"): Promise<{ rate: number; p50: number }> {
  const conch = createClient({ brokers: [address] });
  const producer = conch.producer({ acks, lingerMs: 0 });
  const records = Array.from({ length: BATCH }, () => ({ value: Buffer.alloc(RECORD_BYTES, 7) }));
  const latencies: number[] = [];
  let acked = 0;
  const end = performance.now() + SECONDS * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await producer.sendBatch(
        TOPIC,
        records.map((r, i) => ({ ...r, key: `k${i % 8}` })),
      );
      latencies.push(performance.now() - t0);
      acked += BATCH;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: WINDOW }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await producer.close();
  await conch.close();
  latencies.sort((a, b) => a - b);
  return { rate: acked / elapsed, p50: latencies[Math.floor(latencies.length / 2)] ?? 0 };
}

const brokers = [await start(1), await start(2)];
const endpoints: BrokerEndpoint[] = brokers.map((b, i) => ({ id: i + 1, host: "127.0.0.1", port: b.port }));
const role: PartitionRole = {
  topic: TOPIC,
  partition: 0,
  leaderId: 1,
  leaderEpoch: 1,
  replicas: [1, 2],
  isr: [1, 2],
};
// Followers first, so the leader's followers are fetching when it starts to count.
const waits = brokers.map((b) => ready(b.child));
for (const b of [...brokers].reverse()) b.child.send({ endpoints, role, partitions: 1 });
await Promise.all(waits);
const address = `127.0.0.1:${endpoints[0]!.port}`;
const results: Record<string, number[]> = { leader: [], all: [] };
const p50s: Record<string, number[]> = { leader: [], all: [] };
// A warm-up round first (not counted): the first seconds of a fresh process are JIT and page faults.
await round(address, "leader");
for (const acks of ["leader", "all", "leader", "all", "leader", "all"] as const) {
  const r = await round(address, acks);
  results[acks]!.push(r.rate);
  p50s[acks]!.push(r.p50);
  console.log(`acks=${acks}: ${Math.round(r.rate)} records/s, batch of ${BATCH} p50 ${r.p50.toFixed(2)} ms`);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `RF 2, ${RECORD_BYTES}-byte records, ${WINDOW} batches in flight: acks=all ${Math.round(mean(results.all!))} records/s, ` +
    `acks=leader ${Math.round(mean(results.leader!))} records/s ` +
    `(${((100 * mean(results.all!)) / mean(results.leader!)).toFixed(0)}%)`,
);
for (const b of brokers) b.child.send("stop");
await Promise.all(brokers.map((b) => new Promise((ok) => b.child.once("exit", ok))));

/**
 * One broker against two on the same machine, in one run: the aggregate produce rate of a topic
 * whose partitions all live on one `conch broker` process, then of the same topic spread over two
 * (replication factor 1, so each record is stored once either way). Each phase starts its own
 * etcd cluster id and brokers, produces from this process with the SDK (acks leader, 100-byte
 * values, up to 4,000 sends in flight) for a fixed time, and counts acknowledged records. Needs
 * `etcd` (apt-get install etcd-server). The load average is printed: on a shared machine, compare
 * the two phases' ratio rather than their absolute rates.
 *
 * Rounds alternate the two (1, 2, 1, 2, ...) and each round's ratio is printed with the median.
 *
 *   npm run bench:cluster-scale [seconds per phase = 5] [partitions = 4] [rounds = 3]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createClient } from "../src/client/conch.js";
import { BrokerProcess } from "../test/cluster/broker-process.js";
import { metadataUntil } from "../test/cluster/cluster-metadata.js";
import { EtcdCluster } from "../test/cluster/etcd-harness.js";

const seconds = Number(process.argv[2] ?? 5);
const partitions = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 3);
const IN_FLIGHT = 4_000;
let phases = 0;
const value = Buffer.alloc(100, 0x61);
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function phase(etcd: EtcdCluster, brokerCount: number): Promise<number> {
  const clusterId = `scale${++phases}x${brokerCount}`;
  const brokers: BrokerProcess[] = [];
  try {
    for (let id = 1; id <= brokerCount; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId }));
    const first = brokers[0] as BrokerProcess;
    const conch = createClient({ brokers: brokers.map((b) => `127.0.0.1:${b.port}`) });
    try {
      await conch.admin().createTopic("scale", { partitions, configs: { "replication.factor": "1" } });
      // Every partition led, as every broker sees it, before the clock starts.
      for (const b of brokers)
        await metadataUntil(
          b.port,
          (m) => m.topics.find((t) => t.name === "scale")?.partitions.every((x) => x.leaderId >= 0) === true,
          10_000,
        );
      const m = await metadataUntil(first.port, () => true, 1000);
      const leaders = m.topics.find((t) => t.name === "scale")?.partitions.map((x) => x.leaderId) ?? [];
      const producer = conch.producer({ acks: "leader" });
      // Every partition takes a record (a broker may host its partitions a moment after the
      // create is answered: UNKNOWN_TOPIC until then), then a warm-up for connections and JIT.
      for (let p = 0; p < partitions; p++) {
        for (let tries = 0; ; tries++) {
          try {
            await producer.send("scale", { partition: p, value });
            break;
          } catch (err) {
            if (tries > 50) throw err;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
      await Promise.all(
        Array.from({ length: 2_000 }, (_, i) => producer.send("scale", { partition: i % partitions, value })),
      );
      let acked = 0;
      let inFlight = 0;
      let n = 0;
      const end = performance.now() + seconds * 1000;
      const brokerCpuBefore = brokers.map((b) => cpuSeconds(b.child.pid));
      const clientCpuBefore = process.cpuUsage();
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        const pump = (): void => {
          while (inFlight < IN_FLIGHT && performance.now() < end) {
            inFlight++;
            producer.send("scale", { partition: n++ % partitions, value }).then(() => {
              acked++;
              inFlight--;
              if (inFlight < IN_FLIGHT / 2) pump();
              if (inFlight === 0 && performance.now() >= end) resolve();
            }, reject);
          }
        };
        pump();
      });
      const elapsed = (performance.now() - started) / 1000;
      const brokerCpu = brokers.map((b, i) => cpuSeconds(b.child.pid) - (brokerCpuBefore[i] ?? 0));
      const client = process.cpuUsage(clientCpuBefore);
      const clientCpu = (client.user + client.system) / 1e6;
      await producer.close();
      const rate = acked / elapsed;
      const brokerTotal = brokerCpu.reduce((a, b) => a + b, 0);
      console.log(
        `${brokerCount} broker(s), partition leaders [${leaders.join(",")}]: ${acked} records in ${elapsed.toFixed(1)} s = ${Math.round(rate)} records/s; ` +
          `broker CPU ${brokerCpu.map((x) => x.toFixed(1)).join(" + ")} s (${Math.round(acked / brokerTotal)} records per broker CPU second), ` +
          `client CPU ${clientCpu.toFixed(1)} s (load average ${loadavg()[0]?.toFixed(2)})`,
      );
      return rate;
    } finally {
      await conch.close();
    }
  } finally {
    await Promise.all(brokers.map((b) => b.remove()));
  }
}

const etcd = await EtcdCluster.start(1);
try {
  console.log(
    `load average before: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  // Alternating phases, so that a change in the machine's other load hits both sides alike.
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const one = await phase(etcd, 1);
    const two = await phase(etcd, 2);
    ratios.push(two / one);
    console.log(`round ${round}: 2 brokers / 1 broker = ${(two / one).toFixed(2)}`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `ratios ${ratios.map((r) => r.toFixed(2)).join(", ")}; median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(2)}`,
  );
} finally {
  await etcd.stop();
}

/**
 * SIGKILL of a partition's leader under acks=all load, in rounds, on real processes: etcd (1
 * member) and three `conch broker` processes (lease TTL 2 s), one partition with replication factor
 * 3 and min.insync.replicas 2. kafkajs (acks=-1) or our SDK (acks "all") produces one record at a
 * time with retries, recording each acknowledged (offset, value) (failover-loads.ts). Each round kills the leader,
 * times from the kill to the first acknowledgement after it (only the new leader can give it),
 * restarts the killed broker on its data and waits for it to rejoin the ISR. At the end every
 * acknowledged record is read back (librdkafka, or our consumer) and the replicas are compared batch for batch.
 * With SIGSTOP instead, the leader is paused past its lease and woken. Shared by
 * test/cluster/cluster-failover.test.ts, cluster-pause.test.ts and bench/cluster-kill-under-load.ts.
 */
import assert from "node:assert/strict";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import type * as p from "../../src/protocol/index.js";
import { BrokerProcess } from "./broker-process.js";
import { createReplicatedTopic, metadataUntil } from "./cluster-metadata.js";
import { EtcdCluster } from "./etcd-harness.js";
import { type FailoverClient, produceLoad, readBack } from "./failover-loads.js";
import { replicaCrcs } from "./replica-logs.js";

export interface FailoverResult {
  /** Milliseconds from each SIGKILL to the first acknowledgement after it. */
  readonly resumeMs: number[];
  /** "offset" -> value of every acknowledged record. */
  readonly acked: Map<string, string>;
  /** "offset" -> value read back below the last acknowledged offset + 1. */
  readonly read: Map<string, string>;
  /** Each replica's (last offset, CRC) per batch below the same end. */
  readonly replicas: string[][];
}

const TOPIC = "failover";

export async function runFailoverRounds(o: {
  /**
   * SIGKILL (default): the leader dies and is restarted on its data. SIGSTOP: the leader is paused
   * past its lease (until the new leader has acknowledged and 2 lease TTLs have passed), then
   * SIGCONT: it must acknowledge nothing, and rejoins as a follower, truncating what it alone had.
   */
  signal?: "SIGKILL" | "SIGSTOP";
  /** Who produces and reads back: kafkajs and librdkafka (default), or our SDK. */
  client?: FailoverClient;
  maxRounds: number;
  /** No round starts after this much time (ms). */
  budgetMs: number;
  log?: (line: string) => void;
  /**
   * A directory for a trace: each broker's log (broker-<id>.log) and the rounds' events
   * (rounds.log), all JSON lines with wall-clock `time`, to be merged by time.
   */
  traceDir?: string;
}): Promise<FailoverResult> {
  const started = performance.now();
  const traceFile = o.traceDir === undefined ? null : createWriteStream(join(o.traceDir, "rounds.log"));
  const trace = (msg: string): void => {
    traceFile?.write(`${JSON.stringify({ time: Date.now(), msg })}\n`);
  };
  /** A restart (`was` set) keeps the data and the ports, as a broker restarted in place does. */
  const startBroker = (brokerId: number, was?: BrokerProcess): Promise<BrokerProcess> =>
    BrokerProcess.start({
      brokerId,
      etcd: etcd.endpoints,
      clusterId: "kill",
      ...(was === undefined ? {} : { dataDir: was.dataDir, port: was.port, kafkaPort: was.kafkaPort }),
      ...(o.traceDir === undefined ? {} : { logFile: join(o.traceDir, `broker-${brokerId}.log`) }),
    });
  const etcd = await EtcdCluster.start(1);
  const brokers: BrokerProcess[] = [];
  const acked = new Map<string, string>();
  const resumeMs: number[] = [];
  let producing = true;
  let load: Promise<void> = Promise.resolve();
  /** Set while the producer is open: a failed run closes it too (the SDK's reconnects would keep the process alive). */
  let closeLoad: (() => Promise<void>) | null = null;
  try {
    for (let id = 1; id <= 3; id++) brokers.push(await startBroker(id));
    await createReplicatedTopic(brokers[0]?.port ?? 0, TOPIC, 1);
    const producer = await produceLoad(o.client ?? "kafkajs", brokers, TOPIC);
    closeLoad = () => producer.close();
    // The first acknowledgement of a send begun after the kill stops the round's clock: the send in
    // flight at the kill may be answered from the old leader's last response.
    const clock: { killedAt: number; firstAck: ((at: number) => void) | null } = {
      killedAt: -1,
      firstAck: null,
    };
    let n = 0;
    load = (async () => {
      while (producing) {
        const value = `m${n++}`;
        const begun = performance.now();
        try {
          const offset = await producer.send(value);
          const at = performance.now();
          acked.set(String(offset), value);
          // The slow sends are the failover as the client sees it.
          if (at - begun > 200)
            trace(`${value} acknowledged at ${offset} after ${(at - begun).toFixed(0)} ms`);
          if (clock.killedAt >= 0 && begun > clock.killedAt && clock.firstAck !== null) {
            clock.firstAck(at);
            clock.firstAck = null;
          }
        } catch (err) {
          // Not acknowledged (retries ran out): nothing is promised for it.
          trace(
            `${value} failed after ${(performance.now() - begun).toFixed(0)} ms: ${(err as Error).message}`,
          );
        }
      }
    })();
    let paused: BrokerProcess | null = null;
    const live = (): BrokerProcess =>
      brokers.find((b) => b.child.exitCode === null && b !== paused) as BrokerProcess;
    for (let round = 1; round <= o.maxRounds && performance.now() - started < o.budgetMs; round++) {
      const roundStart = performance.now();
      const m = await metadataUntil(live().port, (x) => fullIsr(x), 20_000);
      const isrWaitMs = performance.now() - roundStart;
      const ackedAtStart = acked.size;
      // Some load on the new leader before its turn comes.
      while (acked.size < ackedAtStart + 20 && producing) await new Promise((r) => setTimeout(r, 10));
      const leaderId = m.topics[0]?.partitions[0]?.leaderId ?? -1;
      const index = brokers.findIndex((b) => b.brokerId === leaderId);
      const victim = brokers[index];
      if (victim === undefined) throw new Error(`round ${round}: no leader with a full ISR`);
      const ackedBefore = acked.size;
      const resumed = new Promise<number>((resolve) => {
        clock.firstAck = resolve;
      });
      trace(`round ${round}: ${o.signal ?? "SIGKILL"} of leader ${leaderId}`);
      clock.killedAt = performance.now();
      if (o.signal === "SIGSTOP") {
        paused = victim;
        victim.child.kill("SIGSTOP");
      } else {
        await victim.kill();
      }
      const ms = (await resumed) - clock.killedAt;
      const killedAt = clock.killedAt;
      clock.killedAt = -1;
      resumeMs.push(ms);
      trace(`round ${round}: first ack after ${ms.toFixed(0)} ms`);
      o.log?.(
        `round ${round}: leader ${leaderId} ${o.signal ?? "SIGKILL"}, first ack by the new leader after ${ms.toFixed(0)} ms (${ackedBefore} acked before; the ISR was full again ${isrWaitMs.toFixed(0)} ms into the round)`,
      );
      if (o.signal === "SIGSTOP") {
        // Past its lease for sure (TTL 2 s), then woken: it finds itself fenced and follows.
        const wait = killedAt + 4_000 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        victim.child.kill("SIGCONT");
        paused = null;
        continue;
      }
      trace(`round ${round}: restarting broker ${leaderId}`);
      // On its old ports: with new ones, a client's bootstrap list goes stale round by round, and
      // kafkajs, whose Metadata comes from its bootstrap brokers, then kept sending to the dead
      // leader until its retries ran out (about 12 s: the rounds once measured at 12.1 s).
      brokers[index] = await startBroker(leaderId, victim);
      trace(`round ${round}: broker ${leaderId} listening again`);
    }
    await metadataUntil(live().port, (x) => fullIsr(x), 20_000);
    producing = false;
    await load;
    closeLoad = null;
    await producer.close();
    const end = Math.max(...[...acked.keys()].map(Number)) + 1;
    const readBelow = await readBack(o.client ?? "kafkajs", brokers, TOPIC, end);
    await Promise.all(brokers.map((b) => b.kill()));
    const replicas = await replicaCrcs(
      brokers.map((b) => b.dataDir),
      TOPIC,
      0,
      end,
    );
    return { resumeMs, acked, read: readBelow, replicas };
  } finally {
    traceFile?.end();
    producing = false;
    await load.catch(() => {});
    await closeLoad?.().catch(() => {});
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd.stop();
  }
}

/**
 * What every failover run must show: each round resumed within `boundMs`, every acknowledged record
 * was read back at its acknowledged offset, and the replicas are identical batch for batch.
 */
export function checkFailover(r: FailoverResult, boundMs: number): void {
  for (const ms of r.resumeMs) assert.ok(ms < boundMs, `producing resumed after ${ms.toFixed(0)} ms`);
  assert.ok(r.acked.size > 0);
  for (const [offset, value] of r.acked) assert.equal(r.read.get(offset), value, `offset ${offset}`);
  assert.ok((r.replicas[0]?.length ?? 0) > 0);
  assert.deepEqual(r.replicas[1], r.replicas[0]);
  assert.deepEqual(r.replicas[2], r.replicas[0]);
}

function fullIsr(m: p.MetadataResponse): boolean {
  const part = m.topics.find((t) => t.name === TOPIC)?.partitions[0];
  return part !== undefined && part.leaderId >= 0 && part.isr.length === 3;
}

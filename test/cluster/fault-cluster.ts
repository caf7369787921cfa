/**
 * A real cluster under acks=all load for the fault tests (test/cluster/fault-*.test.ts): etcd (1 or
 * 3 members) and three `conch broker` processes, one topic with replication factor 3 and
 * min.insync.replicas 2, and kafkajs producing one record per send with acks=-1 and retries to one
 * partition, recording each acknowledged (offset, value). A test injects its fault, times what it
 * waits for with `waitFor` (the times go to the test's output), and ends with `verify()`: the ISR
 * full again, the load stopped, the brokers killed, then every acknowledged record read back at
 * its offset from every replica's log and the replicas compared batch for batch.
 */
import { Kafka, logLevel, type Producer } from "kafkajs";
import type * as p from "../../src/protocol/index.js";
import { BrokerProcess, type BrokerProcessOptions } from "./broker-process.js";
import { createReplicatedTopic, metadataFrom, metadataUntil } from "./cluster-metadata.js";
import { EtcdCluster } from "./etcd-harness.js";
import { replicaCrcs, replicaValues } from "./replica-logs.js";

export const FAULT_TOPIC = "faults";

export interface FaultClusterOptions {
  readonly clusterId: string;
  readonly etcdMembers?: 1 | 3;
  /** The brokers' lease TTL (default 2 s). */
  readonly leaseTtlSeconds?: number;
  /** Partitions of the topic (default 1). */
  readonly partitions?: number;
  /** The partition the load goes to, chosen once every ISR is full (default 0). */
  readonly loadPartition?: (m: p.MetadataResponse) => number;
  /** More `conch broker` flags for a broker (by id). */
  readonly args?: (brokerId: number) => readonly string[];
  /** Told of each broker process once it listens (at the start and at each restart). */
  readonly started?: (broker: BrokerProcess) => void;
  readonly log: (line: string) => void;
}

/** One partition's state as a broker's Metadata shows it. */
export interface PartitionState {
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly controllerId: number;
}

export interface Verified {
  readonly acked: number;
  /** Acknowledged records not found at their offset, per replica (broker id -> offsets). */
  readonly missing: Map<number, string[]>;
  /** Each replica's (last offset, CRC) per batch below the last acknowledged offset + 1. */
  readonly replicas: string[][];
}

export class FaultCluster {
  readonly etcd: EtcdCluster;
  readonly brokers: BrokerProcess[];
  readonly #o: FaultClusterOptions;
  #partition = 0;
  /** "offset" -> value of every acknowledged record. */
  readonly acked = new Map<string, string>();
  /** performance.now() of every acknowledgement, in order. */
  readonly #ackTimes: number[] = [];
  /** Resolvers waiting for the first acknowledgement of a send begun after their time. */
  readonly #ackWaiters: { after: number; resolve: (at: number) => void }[] = [];
  #producer: Producer;
  /** How often a failed send made the load replace its producer. */
  replacedProducers = 0;
  #producing = true;
  #load: Promise<void> = Promise.resolve();
  /** Brokers the test has stopped or killed: not asked for Metadata. */
  readonly down = new Set<number>();

  private constructor(o: FaultClusterOptions, etcd: EtcdCluster, brokers: BrokerProcess[]) {
    this.#o = o;
    this.etcd = etcd;
    this.brokers = brokers;
    this.#producer = this.#newProducer();
  }

  /**
   * kafkajs keeps asking a paused broker for Metadata: its refresh picks one "connected" broker and
   * retries on it, and a stopped process's connection stays open. So the retries are few (a send
   * fails after about 6 s) and a failed send replaces the producer (new connections), as an
   * application would restart a stuck client; nothing is promised for a failed send.
   */
  #newProducer(): Producer {
    const kafka = new Kafka({
      // Read at each (re)connection: the brokers the test has not stopped, as service discovery would.
      brokers: () => {
        const up = this.brokers.filter((b) => !this.down.has(b.brokerId));
        return (up.length > 0 ? up : this.brokers).map((b) => `127.0.0.1:${b.kafkaPort}`);
      },
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 1500,
      retry: { retries: 3, initialRetryTime: 50, maxRetryTime: 250, factor: 0.2 },
    });
    return kafka.producer({ allowAutoTopicCreation: false, metadataMaxAge: 500 });
  }

  async #replaceProducer(): Promise<void> {
    const old = this.#producer;
    void old.disconnect().catch(() => {});
    while (this.#producing) {
      this.#producer = this.#newProducer();
      try {
        await this.#producer.connect();
        this.replacedProducers++;
        return;
      } catch {
        void this.#producer.disconnect().catch(() => {});
      }
    }
  }

  static async start(o: FaultClusterOptions): Promise<FaultCluster> {
    const etcd = await EtcdCluster.start(o.etcdMembers ?? 1);
    const brokers: BrokerProcess[] = [];
    try {
      for (let id = 1; id <= 3; id++) {
        const b = await BrokerProcess.start(brokerOptions(o, etcd, id));
        brokers.push(b);
        o.started?.(b);
      }
      await createReplicatedTopic(brokers[0]?.port ?? 0, FAULT_TOPIC, o.partitions ?? 1);
    } catch (err) {
      await Promise.all(brokers.map((b) => b.remove()));
      await etcd.stop();
      throw err;
    }
    const cluster = new FaultCluster(o, etcd, brokers);
    try {
      const m = await metadataUntil(brokers[0]?.port ?? 0, (x) => allIsrsFull(x, o.partitions ?? 1), 20_000);
      cluster.#partition = o.loadPartition?.(m) ?? 0;
      await cluster.#producer.connect();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    cluster.#load = cluster.#produce();
    return cluster;
  }

  /** The partition the load goes to. */
  get partition(): number {
    return this.#partition;
  }

  broker(id: number): BrokerProcess {
    const b = this.brokers.find((x) => x.brokerId === id);
    if (b === undefined) throw new Error(`no broker ${id}`);
    return b;
  }

  /** Restarts a killed broker on its data directory. */
  async restart(id: number): Promise<void> {
    const index = this.brokers.findIndex((x) => x.brokerId === id);
    const old = this.brokers[index];
    if (old === undefined) throw new Error(`no broker ${id}`);
    await old.kill();
    const b = await BrokerProcess.start({ ...brokerOptions(this.#o, this.etcd, id), dataDir: old.dataDir });
    this.brokers[index] = b;
    this.#o.started?.(b);
    this.down.delete(id);
  }

  /** Metadata from a broker that is up. */
  async metadata(): Promise<p.MetadataResponse | null> {
    const b = this.brokers.find((x) => !this.down.has(x.brokerId));
    if (b === undefined) return null;
    return await metadataFrom(b.port).catch(() => null);
  }

  /** The loaded partition as a broker that is up shows it. */
  async state(): Promise<PartitionState | null> {
    const m = await this.metadata();
    return m === null ? null : partitionState(m, this.#partition);
  }

  /**
   * Waits (polling Metadata: no event a client can await says it) until the partition's state
   * holds; returns the milliseconds it took from `since` (default: now) and writes them to the log.
   */
  async waitFor(
    what: string,
    ok: (s: PartitionState) => boolean,
    timeoutMs: number,
    since = performance.now(),
  ): Promise<number> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const s = await this.state();
      if (s !== null && ok(s)) break;
      if (performance.now() > until) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(s)})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ms = performance.now() - since;
    this.#o.log(`${what}: ${ms.toFixed(0)} ms`);
    return ms;
  }

  /** Milliseconds from `since` to the first acknowledgement of a send begun after it (logged as `what`). */
  async firstAckAfter(what: string, since: number, timeoutMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const at = await Promise.race([
      new Promise<number>((resolve) => this.#ackWaiters.push({ after: since, resolve })),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no acknowledgement within ${timeoutMs} ms: ${what}`)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const ms = at - since;
    if (what !== "") this.#o.log(`${what}: ${ms.toFixed(0)} ms`);
    return ms;
  }

  /** The longest time without an acknowledgement between `from` and the last acknowledgement. */
  longestAckGap(from: number): number {
    let gap = 0;
    let previous = from;
    for (const at of this.#ackTimes) {
      if (at < from) continue;
      gap = Math.max(gap, at - previous);
      previous = at;
    }
    return gap;
  }

  /** Resolves once `n` more records have been acknowledged. */
  async moreAcks(n: number, timeoutMs = 20_000): Promise<void> {
    const target = this.acked.size + n;
    const until = performance.now() + timeoutMs;
    while (this.acked.size < target) {
      if (performance.now() > until) throw new Error(`fewer than ${n} acknowledgements in ${timeoutMs} ms`);
      await this.firstAckAfter("", performance.now(), until - performance.now()).catch(() => {});
    }
  }

  /**
   * The end of a fault test: a full ISR again, the load stopped, every broker killed, then the
   * replicas read from their data directories.
   */
  async verify(): Promise<Verified> {
    this.down.clear();
    await this.waitFor("the ISR full again", (s) => s.isr.length === 3, 30_000);
    await this.#stopLoad();
    const end = Math.max(-1, ...[...this.acked.keys()].map(Number)) + 1;
    await Promise.all(this.brokers.map((b) => b.kill()));
    const dirs = this.brokers.map((b) => b.dataDir);
    const replicas = await replicaCrcs(dirs, FAULT_TOPIC, this.#partition, end);
    const missing = new Map<number, string[]>();
    for (const b of this.brokers) {
      const values = await replicaValues(b.dataDir, FAULT_TOPIC, this.#partition, end);
      const lost: string[] = [];
      for (const [offset, value] of this.acked) if (values.get(Number(offset)) !== value) lost.push(offset);
      missing.set(b.brokerId, lost);
    }
    this.#o.log(
      `${this.acked.size} records acknowledged; replicas hold ${replicas[0]?.length ?? 0} batches below ${end}`,
    );
    return { acked: this.acked.size, missing, replicas };
  }

  async stop(): Promise<void> {
    await this.#stopLoad().catch(() => {});
    for (const b of this.brokers) if (b.child.exitCode === null) b.resume();
    await Promise.all(this.brokers.map((b) => b.remove()));
    await this.etcd.stop();
  }

  async #stopLoad(): Promise<void> {
    this.#producing = false;
    await this.#load;
    await this.#producer.disconnect();
  }

  async #produce(): Promise<void> {
    let n = 0;
    while (this.#producing) {
      const value = `m${n++}`;
      const begun = performance.now();
      try {
        const [res] = await this.#producer.send({
          topic: FAULT_TOPIC,
          acks: -1,
          messages: [{ value, partition: this.#partition }],
        });
        const at = performance.now();
        this.acked.set(String(res?.baseOffset), value);
        this.#ackTimes.push(at);
        for (let i = this.#ackWaiters.length - 1; i >= 0; i--) {
          const w = this.#ackWaiters[i];
          if (w !== undefined && begun > w.after) {
            this.#ackWaiters.splice(i, 1);
            w.resolve(at);
          }
        }
      } catch (err) {
        // Not acknowledged (retries ran out): nothing is promised for it.
        this.#o.log(`a send failed (${(err as Error).message}); replacing the producer`);
        await this.#replaceProducer();
      }
    }
  }
}

function brokerOptions(o: FaultClusterOptions, etcd: EtcdCluster, id: number): BrokerProcessOptions {
  return {
    brokerId: id,
    etcd: etcd.endpoints,
    clusterId: o.clusterId,
    leaseTtlSeconds: o.leaseTtlSeconds ?? 2,
    args: o.args?.(id) ?? [],
  };
}

function partitionState(m: p.MetadataResponse, partition: number): PartitionState | null {
  const part = m.topics.find((t) => t.name === FAULT_TOPIC)?.partitions[partition];
  if (part === undefined) return null;
  return {
    leaderId: part.leaderId,
    leaderEpoch: part.leaderEpoch,
    isr: part.isr,
    controllerId: m.controllerId,
  };
}

function allIsrsFull(m: p.MetadataResponse, partitions: number): boolean {
  const parts = m.topics.find((t) => t.name === FAULT_TOPIC)?.partitions ?? [];
  return parts.length === partitions && parts.every((x) => x.leaderId >= 0 && x.isr.length === 3);
}

/**
 * In-process brokers for the replication tests: each a Broker + ConchServer on 127.0.0.1 port 0
 * with its own temp dir and a ReplicaManager, and one in-test ClusterView standing for the
 * metadata side: the tests hand out roles by hand, and an ISR proposal succeeds while its epoch
 * is the partition's current one (as the compare-and-swap in etcd would).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { ReplicaManager, type ReplicaManagerOptions } from "../../src/cluster/replica-manager.js";
import type { BrokerEndpoint, ClusterView, PartitionRole } from "../../src/cluster/roles.js";
import { batchLastOffset, recordSize } from "../../src/format/batch-header.js";
import { CRC_AT } from "../../src/format/layout.js";
import { ConchServer } from "../../src/server/conch-server.js";
import type { PartitionLog } from "../../src/storage/partition-log.js";

export interface Node {
  id: number;
  broker: Broker;
  server: ConchServer;
  manager: ReplicaManager;
  endpoint: BrokerEndpoint;
  dir: string;
}

/** The metadata side as the tests play it: endpoints, the current epoch, the ISR proposals seen. */
export class TestCluster {
  readonly nodes = new Map<number, Node>();
  /** Current epoch per partition key; proposals with another fail. */
  readonly epochs = new Map<string, number>();
  readonly proposals: Array<{ brokerId: number; isr: readonly number[] }> = [];
  /** Brokers whose lease deadline has passed (their deadline timer not yet run). */
  readonly leaseExpired = new Set<number>();

  view(brokerId: number): ClusterView {
    return {
      brokerId,
      endpoint: (id) => this.nodes.get(id)?.endpoint,
      // As ClusterNode: past the deadline the broker fences itself before saying so.
      leaseHeld: () => {
        if (!this.leaseExpired.has(brokerId)) return true;
        this.node(brokerId).manager.fence();
        return false;
      },
      proposeIsr: async (topic, partition, leaderEpoch, isr) => {
        this.proposals.push({ brokerId, isr });
        return this.epochs.get(`${topic}/${partition}`) === leaderEpoch;
      },
    };
  }

  node(id: number): Node {
    const n = this.nodes.get(id);
    if (n === undefined) throw new Error(`no broker ${id}`);
    return n;
  }

  /** Hands `role` to every broker listed in its replicas (the controller's job). */
  async apply(role: PartitionRole, only?: readonly number[]): Promise<void> {
    this.epochs.set(`${role.topic}/${role.partition}`, role.leaderEpoch);
    for (const id of only ?? role.replicas) await this.node(id).manager.applyRole(role);
  }
}

/** Starts brokers `ids`, each with `topic` (partitions 1) created locally. */
export async function startCluster(
  t: TestContext,
  ids: number[],
  topic: string,
  options: Partial<ReplicaManagerOptions> = {},
): Promise<TestCluster> {
  const cluster = new TestCluster();
  for (const id of ids) {
    const dir = await mkdtemp(join(tmpdir(), `conch-repl-${id}-`));
    const broker = await Broker.open({ dataDir: dir, segmentBytes: 1 << 20 });
    const server = new ConchServer(broker, { shutdownTimeoutMs: 1000 });
    const { port } = await server.listen(0, "127.0.0.1");
    await broker.createTopic(topic, 1);
    const manager = new ReplicaManager({
      broker,
      view: cluster.view(id),
      lagTimeMaxMs: 2_000,
      fetchMaxWaitMs: 100,
      fetchRetryMs: 50,
      ...options,
    });
    cluster.nodes.set(id, { id, broker, server, manager, endpoint: { id, host: "127.0.0.1", port }, dir });
  }
  t.after(async () => {
    for (const n of cluster.nodes.values()) {
      await n.manager.close();
      await n.server.close();
      await n.broker.close();
      await rm(n.dir, { recursive: true, force: true });
    }
  });
  return cluster;
}

export function role(
  topic: string,
  leaderId: number,
  leaderEpoch: number,
  replicas: number[],
  isr: number[] = replicas,
): PartitionRole {
  return { topic, partition: 0, leaderId, leaderEpoch, replicas, isr };
}

/** (last offset, CRC) of every batch of `log` below `end`, read as a follower reads. */
export async function batchCrcs(log: PartitionLog, end: number): Promise<string[]> {
  const out: string[] = [];
  let offset = log.logStartOffset;
  while (offset < end) {
    const { records } = await log.readReplica(offset, 1 << 20);
    if (records.length === 0) break;
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      const last = batchLastOffset(records, at);
      if (last >= end) return out;
      out.push(`${last}:${records.readUInt32BE(at + CRC_AT)}`);
      offset = last + 1;
    }
  }
  return out;
}

/** Resolves once `check` holds, polling the in-process state every few ms (no event exposes it). */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

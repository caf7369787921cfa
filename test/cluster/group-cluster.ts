/**
 * A real cluster for the consumer-group tests: one etcd, three `conch broker` processes, and the
 * broker that coordinates a group as the cluster says (the leader of its `__consumer_offsets`
 * partition, read with native Metadata from a live broker).
 */
import { groupPartition } from "../../src/broker/group-partition.js";
import { OFFSETS_TOPIC } from "../../src/broker/offset-store.js";
import * as p from "../../src/protocol/index.js";
import { TestClient } from "../server/helpers.js";
import { BrokerProcess } from "./broker-process.js";
import { EtcdCluster } from "./etcd-harness.js";

export interface GroupCluster {
  readonly etcd: EtcdCluster;
  readonly brokers: BrokerProcess[];
  /** The brokers not killed. */
  live(): BrokerProcess[];
  /** The coordinator of `group` as a live broker's metadata has it; -1 while none. */
  coordinatorId(group: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startGroupCluster(clusterId: string): Promise<GroupCluster> {
  const etcd = await EtcdCluster.start(1);
  const brokers: BrokerProcess[] = [];
  try {
    for (let id = 1; id <= 3; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId }));
  } catch (err) {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd.stop();
    throw err;
  }
  const live = (): BrokerProcess[] =>
    brokers.filter((b) => b.child.exitCode === null && b.child.signalCode === null);
  return {
    etcd,
    brokers,
    live,
    async coordinatorId(group: string): Promise<number> {
      const b = live()[0];
      if (b === undefined) return -1;
      const c = await TestClient.connect(b.port);
      try {
        await c.handshake();
        const m = p.decodeMetadataResponse(
          await c.call((id) => p.encodeMetadataRequest(id, [OFFSETS_TOPIC])),
        );
        const parts = m.topics[0]?.partitions ?? [];
        if (parts.length === 0) return -1;
        const leader = parts[groupPartition(group, parts.length)]?.leaderId ?? -1;
        return m.brokers.some((x) => x.id === leader) ? leader : -1;
      } finally {
        c.destroy();
      }
    },
    async stop() {
      await Promise.all(brokers.map((b) => b.remove()));
      await etcd.stop();
    },
  };
}

/** Polls `probe` every 100 ms until it returns a value that is not undefined; rejects at the deadline. */
export async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

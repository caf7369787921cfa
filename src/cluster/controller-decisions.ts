/**
 * The controller's decisions as pure functions of the metadata (docs/cluster.md): where a new
 * topic's replicas go, a new partition's first record, and the record after a leader's broker
 * dies or an offline partition's in-sync replica returns. Unclean election is off: only an ISR
 * member ever leads, so no acknowledged write is lost by a failover.
 */
import type { PartitionRecord } from "./metadata-records.js";

type Live = (brokerId: number) => boolean;
type Decided = Omit<PartitionRecord, "topic" | "partition">;

/**
 * Replicas of each partition, spread round robin over the live brokers (sorted by id), starting
 * at a broker chosen from the topic's name so that topics' first partitions do not all land on
 * the same broker. Partition p's preferred leader is broker (start + p) mod n.
 */
export function assignReplicas(
  topic: string,
  brokerIds: readonly number[],
  partitions: number,
  replicationFactor: number,
): number[][] {
  const ids = [...brokerIds].sort((a, b) => a - b);
  const n = ids.length;
  if (replicationFactor > n) throw new RangeError(`replication factor ${replicationFactor} > ${n} brokers`);
  let start = 0;
  for (let i = 0; i < topic.length; i++) start = (start * 31 + topic.charCodeAt(i)) % n;
  const out: number[][] = [];
  for (let p = 0; p < partitions; p++) {
    const replicas: number[] = [];
    for (let j = 0; j < replicationFactor; j++) replicas.push(ids[(start + p + j) % n] as number);
    out.push(replicas);
  }
  return out;
}

/** The first record of a new partition: every live replica in sync (all logs are empty). */
export function initialRecord(replicas: readonly number[], live: Live, controllerEpoch: number): Decided {
  const up = replicas.filter(live);
  // With no replica up, any of them may lead once it comes: all are empty.
  return {
    leaderId: up[0] ?? -1,
    leaderEpoch: 0,
    replicas,
    isr: up.length > 0 ? up : replicas,
    controllerEpoch,
  };
}

/**
 * The record a partition needs now, or null when it is fine: a leader on a dead broker goes to the
 * first live ISR member with epoch + 1 and the dead leader out of the ISR; with no live ISR member
 * the partition goes offline (leader -1, epoch + 1 to fence the old leader) and keeps its last ISR,
 * whose first member to return leads it again. Under a live leader, followers whose brokers died
 * leave the ISR (same leader and epoch), as Kafka's controller does on a broker's death: acks
 * "all" would otherwise wait for a dead follower until the leader's lag check drops it (10 s), and
 * a later election could pick a broker that is not fetching. A returning broker joins again
 * through its leader once it has caught up.
 */
export function electLeader(record: PartitionRecord, live: Live, controllerEpoch: number): Decided | null {
  if (record.leaderId !== -1 && live(record.leaderId)) {
    if (record.isr.every(live)) return null;
    return { ...fields(record), isr: record.isr.filter(live), controllerEpoch };
  }
  const upIsr = record.isr.filter(live);
  const next = upIsr[0];
  if (next === undefined) {
    // Already offline: nothing to do until an ISR member returns.
    if (record.leaderId === -1) return null;
    return { ...fields(record), leaderId: -1, leaderEpoch: record.leaderEpoch + 1, controllerEpoch };
  }
  return {
    ...fields(record),
    leaderId: next,
    leaderEpoch: record.leaderEpoch + 1,
    isr: upIsr,
    controllerEpoch,
  };
}

function fields(r: PartitionRecord): Decided {
  return {
    leaderId: r.leaderId,
    leaderEpoch: r.leaderEpoch,
    replicas: r.replicas,
    isr: r.isr,
    controllerEpoch: r.controllerEpoch,
  };
}

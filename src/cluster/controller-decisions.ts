/**
 * The controller's decisions as pure functions of the metadata (docs/cluster.md): where a new
 * topic's replicas go, a new partition's first record, the record after a leader's broker dies,
 * begins a controlled shutdown or an offline partition's in-sync replica returns, the steps of a
 * reassignment, and the return of a preferred leader. Unclean election is off: only an ISR member
 * ever leads, so no acknowledged write is lost by a failover or a move.
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
 * whose first member to return leads it again. A leader that is shutting down (alive, but not
 * `leadable`) hands over to the first leadable ISR member the same way, or keeps leading while
 * there is none.
 */
export function electLeader(
  record: PartitionRecord,
  live: Live,
  controllerEpoch: number,
  leadable: Live = live,
): Decided | null {
  if (record.leaderId !== -1 && leadable(record.leaderId)) return null;
  const leaderGone = record.leaderId === -1 || !live(record.leaderId);
  const upIsr = record.isr.filter(live);
  const next = upIsr.find(leadable);
  if (next === undefined) {
    // Already offline, or a leader shutting down with no one to take over: nothing to do yet.
    if (!leaderGone || record.leaderId === -1) return null;
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

/**
 * Followers whose brokers died or are shutting down leave the ISR (same leader and epoch), as
 * Kafka's controller does on a broker's death: acks "all" would otherwise wait for such a follower
 * until the leader's lag check drops it (10 s), and a later election could pick a broker that is not
 * fetching. A returning broker joins again through its leader once it has caught up. Null when none is in the ISR, or
 * while the leader itself still has to hand over (electLeader first).
 */
export function withoutLeaving(
  record: PartitionRecord,
  leadable: Live,
  controllerEpoch: number,
): Decided | null {
  if (record.leaderId === -1 || !leadable(record.leaderId)) return null;
  const isr = record.isr.filter((id) => id === record.leaderId || leadable(id));
  if (isr.length === record.isr.length) return null;
  return { ...fields(record), isr, controllerEpoch };
}

/**
 * The next step of moving a partition to `target` (the topic record's assignment), Kafka's way:
 * first the replicas become old + new (the new ones follow, outside the ISR, until they catch up
 * and the leader adds them); once every target replica is in the ISR, the old ones are dropped and,
 * if the leader was one of them, the first in-sync target replica leads with epoch + 1. Null when
 * there is nothing to do now (no move, a move still catching up, or no leader to copy from).
 */
export function reassignStep(
  record: PartitionRecord,
  target: readonly number[],
  leadable: Live,
  controllerEpoch: number,
): Decided | null {
  if (record.leaderId === -1) return null;
  const moving = record.targetReplicas;
  if (moving === undefined && sameList(record.replicas, target)) return null;
  if (moving === undefined || !sameList(moving, target)) {
    // Begin (or redirect a move under way): every replica there now stays until the target is in sync.
    const replicas = [...target, ...record.replicas.filter((id) => !target.includes(id))];
    return { ...fields(record), replicas, targetReplicas: [...target], controllerEpoch };
  }
  if (!target.every((id) => record.isr.includes(id))) return null;
  const isr = record.isr.filter((id) => target.includes(id));
  const stays = target.includes(record.leaderId) && leadable(record.leaderId);
  const leaderId = stays ? record.leaderId : isr.find(leadable);
  if (leaderId === undefined) return null;
  return {
    leaderId,
    leaderEpoch: stays ? record.leaderEpoch : record.leaderEpoch + 1,
    replicas: [...target],
    isr,
    controllerEpoch,
  };
}

/**
 * The preferred leader (the first replica) back in the lead once it is in the ISR and able to
 * lead, with epoch + 1; null when it already leads, is out of the ISR or a move is under way.
 */
export function preferredLeader(
  record: PartitionRecord,
  leadable: Live,
  controllerEpoch: number,
): Decided | null {
  const preferred = record.replicas[0];
  if (record.targetReplicas !== undefined || preferred === undefined || record.leaderId === -1) return null;
  if (preferred === record.leaderId || !record.isr.includes(preferred) || !leadable(preferred)) return null;
  return { ...fields(record), leaderId: preferred, leaderEpoch: record.leaderEpoch + 1, controllerEpoch };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => b[i] === id);
}

function fields(r: PartitionRecord): Decided {
  return {
    leaderId: r.leaderId,
    leaderEpoch: r.leaderEpoch,
    replicas: r.replicas,
    isr: r.isr,
    controllerEpoch: r.controllerEpoch,
    ...(r.targetReplicas === undefined ? {} : { targetReplicas: r.targetReplicas }),
  };
}

/**
 * The leader's view of one partition's replication (docs/cluster.md): each follower's log end, the
 * in-sync replicas (ISR) and the high watermark, the lowest log end in the ISR, which it sets as
 * the log's visibility ceiling, so consumers and acks "all" wait for it.
 *
 * A follower is caught up when its log end reaches the leader's local end; one that has not been
 * caught up for `lagTimeMaxMs` leaves the ISR, and one outside that reaches the high watermark
 * joins again. Both changes go through ClusterView.proposeIsr (a compare-and-swap in etcd guarded
 * by the epoch) and take effect only once it succeeded, so the high watermark never counts on a
 * replica the cluster does not list; when it fails, the epoch moved and this leader steps down.
 */
import type { PartitionLog } from "../storage/partition-log.js";
import type { PartitionRole } from "./roles.js";

interface FollowerState {
  /** Its log end as last reported; -1 until it fetches in this epoch. */
  leo: number;
  /** performance.now() when its log end last reached the leader's local end. */
  caughtUpAt: number;
}

export class ReplicaLeader {
  readonly role: PartitionRole;
  readonly log: PartitionLog;
  readonly #self: number;
  #isr: number[];
  readonly #followers = new Map<number, FollowerState>();
  /** An ISR change waiting for its compare-and-swap. */
  #proposing = false;
  /** Set when it stepped down or fenced itself: it acknowledges nothing more. */
  #stopped = false;
  /** Whether the high watermark has moved in this epoch yet (logged once). */
  hwMoved = false;

  constructor(role: PartitionRole, log: PartitionLog, self: number, now: number) {
    this.role = role;
    this.log = log;
    this.#self = self;
    this.#isr = [...role.isr];
    for (const id of role.replicas) if (id !== self) this.#followers.set(id, { leo: -1, caughtUpAt: now });
  }

  get isr(): readonly number[] {
    return this.#isr;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Stops for good: the high watermark stays where it is, so no acks "all" is answered any more. */
  stop(): void {
    this.#stopped = true;
  }

  /** The follower has stored everything before `leo`; returns the replica to add to the ISR, if any. */
  followerAt(replicaId: number, leo: number, now: number): number | null {
    const f = this.#followers.get(replicaId);
    if (f === undefined || this.#stopped) return null;
    f.leo = leo;
    if (leo >= this.log.localEndOffset) f.caughtUpAt = now;
    this.updateHighWatermark();
    if (!this.#isr.includes(replicaId) && leo >= this.log.highWatermark && !this.#proposing) return replicaId;
    return null;
  }

  /**
   * The high watermark: the lowest log end in the ISR, never moved back. With no follower in the
   * ISR it is the leader's own end, moving with every write (no ceiling).
   */
  updateHighWatermark(): void {
    if (this.#stopped) return;
    let hw = Number.POSITIVE_INFINITY;
    for (const id of this.#isr) {
      if (id === this.#self) continue;
      const f = this.#followers.get(id);
      const leo = f === undefined ? -1 : f.leo;
      if (leo < hw) hw = leo;
    }
    this.log.setVisibilityCeiling(Math.max(hw, this.log.highWatermark));
  }

  /** The ISR members that have lagged for longer than `lagTimeMaxMs` (the ISR without them), or null. */
  shrunkIsr(now: number, lagTimeMaxMs: number): number[] | null {
    if (this.#stopped || this.#proposing) return null;
    const end = this.log.localEndOffset;
    const kept: number[] = [];
    for (const id of this.#isr) {
      const f = this.#followers.get(id);
      if (f !== undefined && f.leo >= end) f.caughtUpAt = now;
      if (id !== this.#self && (f === undefined || now - f.caughtUpAt > lagTimeMaxMs)) continue;
      kept.push(id);
    }
    return kept.length === this.#isr.length ? null : kept;
  }

  /** An ISR change goes to the cluster; until it is settled no other is proposed. */
  proposing(): void {
    this.#proposing = true;
  }

  /** The cluster took the ISR change (`isr` set) or refused it (null). */
  settled(isr: readonly number[] | null): void {
    this.#proposing = false;
    if (isr === null) return;
    this.#isr = [...isr];
    this.updateHighWatermark();
  }

  /**
   * The replica set changed within the epoch (a reassignment added or dropped replicas): new
   * followers start unknown and outside the ISR, dropped ones are forgotten.
   */
  setReplicas(replicas: readonly number[], now: number): void {
    for (const id of replicas)
      if (id !== this.#self && !this.#followers.has(id))
        this.#followers.set(id, { leo: -1, caughtUpAt: now });
    for (const id of [...this.#followers.keys()]) if (!replicas.includes(id)) this.#followers.delete(id);
  }

  /** The ISR with `replicaId` added. */
  grownIsr(replicaId: number): number[] {
    return [...this.#isr, replicaId].sort((a, b) => a - b);
  }
}

/**
 * One member of a consumer group, as the coordinator sees it: what it subscribes to, its timeouts,
 * when it was last heard from, the join it is waiting in (if any) and the partitions it owns in the
 * group's current generation.
 */
import type { AssignmentStrategy } from "./group-assignor.js";
import type { JoinWaiter } from "./rebalancing-group.js";

export interface TopicPartitions {
  topic: string;
  /** Ascending. */
  partitions: number[];
}

export interface JoinResult {
  generation: number;
  memberId: string;
  strategy: AssignmentStrategy;
  assignment: TopicPartitions[];
}

/** A JoinGroup request the broker holds until the rebalance completes. */
export type PendingJoin = JoinWaiter<JoinResult>;

export class GroupMember {
  readonly id: string;
  /** Order of arrival in the group: the oldest member breaks strategy ties. */
  readonly since: number;
  clientId: string;
  /** Sorted, no duplicates. */
  topics: readonly string[];
  strategy: AssignmentStrategy;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /** Clock time of the last join, heartbeat or commit. */
  lastSeen: number;
  pendingJoin: PendingJoin | null = null;
  /** True until the member's first join completes: it owns nothing and knows no generation yet. */
  isNew = true;
  /** topic -> partitions owned in the current generation. */
  #owned = new Map<string, number[]>();

  constructor(
    id: string,
    since: number,
    clientId: string,
    topics: readonly string[],
    strategy: AssignmentStrategy,
    sessionTimeoutMs: number,
    rebalanceTimeoutMs: number,
    now: number,
  ) {
    this.id = id;
    this.since = since;
    this.clientId = clientId;
    this.topics = topics;
    this.strategy = strategy;
    this.sessionTimeoutMs = sessionTimeoutMs;
    this.rebalanceTimeoutMs = rebalanceTimeoutMs;
    this.lastSeen = now;
  }

  /** Whether the member owns a partition in the current generation; no allocation (fetch path). */
  owns(topic: string, partition: number): boolean {
    const partitions = this.#owned.get(topic);
    return partitions?.includes(partition) === true;
  }

  get owned(): ReadonlyMap<string, readonly number[]> {
    return this.#owned;
  }

  setOwned(owned: Map<string, number[]>): void {
    this.#owned = owned;
  }

  /** The owned partitions as the wire lists them: by topic name. */
  assignment(): TopicPartitions[] {
    return [...this.#owned.keys()]
      .sort()
      .map((topic) => ({ topic, partitions: [...this.#owned.get(topic)!] }));
  }

  /** Whether a session without news has run out. A member waiting in a join is never expired. */
  expired(now: number): boolean {
    return this.pendingJoin === null && now - this.lastSeen > this.sessionTimeoutMs;
  }
}

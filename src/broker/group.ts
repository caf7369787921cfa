/**
 * One consumer group's membership: the state machine of docs/groups.md.
 *
 *   Empty --join--> PreparingRebalance --all members rejoined, or the rebalance timeout--> Stable
 *   Stable --a member joins, leaves, changes its subscription or misses its session--> PreparingRebalance
 *   PreparingRebalance --the last member leaves--> Empty
 *
 * Completing a rebalance starts a new generation: the assignment is computed for the members then
 * present and every waiting join is answered with its share. Whatever belongs to an older
 * generation (a heartbeat, a commit, a fetch as the owner) is refused from then on.
 *
 * What it shares with a Kafka group (joins, generations, sessions, the rebalance timeout) is in
 * rebalancing-group.ts; time is whatever clock the coordinator passes in.
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { type AssignmentStrategy, assignPartitions } from "./group-assignor.js";
import { GroupMember, type JoinResult } from "./group-member.js";
import { RebalancingGroup, unknownMember } from "./rebalancing-group.js";

export type GroupStateName = "Empty" | "PreparingRebalance" | "Stable";

/** A join, validated: topics sorted and unique. */
export interface JoinSpec {
  memberId: string;
  clientId: string;
  topics: readonly string[];
  strategy: AssignmentStrategy;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
}

/** Generations are u32 on the wire; after the last one the count starts again at 1. */
const MAX_GENERATION = 0xffffffff;

export class ConsumerGroup extends RebalancingGroup<"Stable", GroupMember, JoinResult> {
  /** The strategy of the current generation; "" before the first. */
  #strategy: AssignmentStrategy | "" = "";
  /** Partition counts the current assignment was computed with, to notice a topic growing. */
  #counts = new Map<string, number>();
  #partitionCount: (topic: string) => number;

  constructor(name: string, partitionCount: (topic: string) => number, logger: Logger) {
    super(name, logger, MAX_GENERATION);
    this.#partitionCount = partitionCount;
  }

  get state(): GroupStateName {
    return this.status;
  }

  get strategy(): AssignmentStrategy | "" {
    return this.#strategy;
  }

  /**
   * A member joins or rejoins. Resolves when the rebalance completes, at once for a member of a
   * stable group that changed nothing (it only lost track of its generation). `signal` ends the
   * wait (the connection closed): a member that never got its id is forgotten then.
   */
  join(spec: JoinSpec, now: number, signal?: AbortSignal): Promise<JoinResult> {
    let member: GroupMember;
    let changed: boolean;
    if (spec.memberId === "") {
      const id = this.newMemberId(spec.clientId);
      member = new GroupMember(
        id,
        this.arrivals++,
        spec.clientId,
        spec.topics,
        spec.strategy,
        spec.sessionTimeoutMs,
        spec.rebalanceTimeoutMs,
        now,
      );
      this.roster.set(id, member);
      changed = true;
    } else {
      member = this.member(spec.memberId);
      changed = !sameList(member.topics, spec.topics) || member.strategy !== spec.strategy;
      member.clientId = spec.clientId;
      member.topics = spec.topics;
      member.strategy = spec.strategy;
      member.sessionTimeoutMs = spec.sessionTimeoutMs;
      member.rebalanceTimeoutMs = spec.rebalanceTimeoutMs;
      member.lastSeen = now;
    }
    if (this.status === "Stable" && !changed && !member.isNew) {
      return Promise.resolve(this.resultFor(member));
    }
    return this.waitForRebalance(member, now, signal);
  }

  /**
   * A heartbeat: REBALANCE_IN_PROGRESS while the members must rejoin, ILLEGAL_GENERATION for a
   * generation that is over, UNKNOWN_MEMBER for a member the group does not have.
   */
  heartbeat(memberId: string, generation: number, now: number): void {
    const member = this.member(memberId);
    member.lastSeen = now;
    if (this.status === "Stable" && this.#topicsChanged()) {
      this.prepareRebalance(now, "partition count changed");
    }
    if (this.status === "PreparingRebalance") throw this.rebalancing();
    this.checkGeneration(member, generation);
  }

  leave(memberId: string, now: number): void {
    this.remove(this.member(memberId), now, "left the group");
  }

  /** Throws unless the member owns the partition in this generation (the fetch path: no allocation). */
  checkOwner(memberId: string, generation: number, topic: string, partition: number): void {
    const member = this.roster.get(memberId);
    if (member === undefined) throw unknownMember(this.name, memberId);
    this.checkGeneration(member, generation);
    if (!member.owns(topic, partition)) {
      throw new ConchError(
        ErrorCode.ILLEGAL_GENERATION,
        `member ${memberId} does not own ${topic}/${partition} in generation ${generation} of group "${this.name}"`,
      );
    }
  }

  /**
   * Throws unless the member may commit these partitions: its generation is the current one (during
   * a rebalance too: the members commit before their partitions move) and it owns every one.
   * memberId "" with generation 0 is a commit on behalf of no member, for a group without members.
   */
  checkCommit(
    memberId: string,
    generation: number,
    partitions: readonly { topic: string; partition: number }[],
    now: number,
  ): void {
    if (this.commitWithoutMember(memberId, generation)) return;
    const member = this.member(memberId);
    for (const p of partitions) this.checkOwner(memberId, generation, p.topic, p.partition);
    this.checkGeneration(member, generation);
    member.lastSeen = now;
  }

  /** Answers every waiting join with `err` (the broker is stopping). */
  abortJoins(err: ConchError): void {
    for (const m of this.roster.values()) {
      const pending = m.pendingJoin;
      m.pendingJoin = null;
      pending?.reject(err);
    }
  }

  protected override onEmpty(): void {
    this.#counts.clear();
  }

  /** The assignment for the members present: the group is stable at once. */
  protected override assign(members: readonly GroupMember[]): "Stable" {
    const strategy = chooseStrategy(members);
    this.#strategy = strategy;
    this.#counts.clear();
    const count = (topic: string): number => {
      let n = this.#counts.get(topic);
      if (n === undefined) {
        n = this.#partitionCount(topic);
        this.#counts.set(topic, n);
      }
      return n;
    };
    const assignment = assignPartitions(strategy, members, count);
    for (const m of members) m.setOwned(assignment.get(m.id) ?? new Map());
    this.logger.info(
      { group: this.name, generation: this.generation, members: members.length, strategy },
      "rebalance complete",
    );
    return "Stable";
  }

  protected override resultFor(member: GroupMember): JoinResult {
    return {
      generation: this.generation,
      memberId: member.id,
      strategy: this.#strategy === "" ? member.strategy : this.#strategy,
      assignment: member.assignment(),
    };
  }

  #topicsChanged(): boolean {
    for (const [topic, n] of this.#counts) if (this.#partitionCount(topic) !== n) return true;
    return false;
  }
}

/** The strategy most members ask for; a tie goes to the choice of the longest-standing member. */
function chooseStrategy(members: readonly GroupMember[]): AssignmentStrategy {
  const votes = new Map<AssignmentStrategy, number>();
  for (const m of members) votes.set(m.strategy, (votes.get(m.strategy) ?? 0) + 1);
  let best: GroupMember | null = null;
  for (const m of members) {
    if (best === null) {
      best = m;
      continue;
    }
    const mv = votes.get(m.strategy)!;
    const bv = votes.get(best.strategy)!;
    if (mv > bv || (mv === bv && m.since < best.since)) best = m;
  }
  return best!.strategy;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

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
 * Time is whatever clock the coordinator passes in (milliseconds); nothing here reads a clock or
 * starts a timer, so tests can drive it step by step.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { type AssignmentStrategy, assignPartitions } from "./group-assignor.js";
import { GroupMember, type JoinResult, type PendingJoin } from "./group-member.js";
import { GroupWait } from "./group-wait.js";

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

/** A member id is the client id (cut to this many characters) and a random UUID. */
const MAX_ID_PREFIX = 64;
/** Generations are u32 on the wire; after the last one the count starts again at 1. */
const MAX_GENERATION = 0xffffffff;

export class ConsumerGroup {
  readonly name: string;
  #state: GroupStateName = "Empty";
  #generation = 0;
  /** The strategy of the current generation; "" before the first. */
  #strategy: AssignmentStrategy | "" = "";
  #members = new Map<string, GroupMember>();
  #arrivals = 0;
  #rebalanceDeadline = 0;
  /** Partition counts the current assignment was computed with, to notice a topic growing. */
  #counts = new Map<string, number>();
  #partitionCount: (topic: string) => number;
  #logger: Logger;

  constructor(name: string, partitionCount: (topic: string) => number, logger: Logger) {
    this.name = name;
    this.#partitionCount = partitionCount;
    this.#logger = logger;
  }

  get state(): GroupStateName {
    return this.#state;
  }

  get generation(): number {
    return this.#generation;
  }

  get strategy(): AssignmentStrategy | "" {
    return this.#strategy;
  }

  get memberCount(): number {
    return this.#members.size;
  }

  /** Members ordered by id. */
  members(): GroupMember[] {
    return [...this.#members.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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
      const id = `${spec.clientId === "" ? "member" : spec.clientId.slice(0, MAX_ID_PREFIX)}-${randomUUID()}`;
      member = new GroupMember(
        id,
        this.#arrivals++,
        spec.clientId,
        spec.topics,
        spec.strategy,
        spec.sessionTimeoutMs,
        spec.rebalanceTimeoutMs,
        now,
      );
      this.#members.set(id, member);
      changed = true;
    } else {
      const known = this.#members.get(spec.memberId);
      if (known === undefined) throw unknownMember(this.name, spec.memberId);
      member = known;
      changed = !sameList(member.topics, spec.topics) || member.strategy !== spec.strategy;
      member.clientId = spec.clientId;
      member.topics = spec.topics;
      member.strategy = spec.strategy;
      member.sessionTimeoutMs = spec.sessionTimeoutMs;
      member.rebalanceTimeoutMs = spec.rebalanceTimeoutMs;
      member.lastSeen = now;
    }
    if (this.#state === "Stable" && !changed && !member.isNew) {
      return Promise.resolve(this.#resultFor(member));
    }
    const result = new Promise<JoinResult>((resolve, reject) => {
      const previous = member.pendingJoin;
      const pending = new GroupWait<JoinResult>(resolve, reject, () => this.#abandon(member, pending, now));
      member.pendingJoin = pending;
      previous?.reject(
        new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "a newer join of the same member replaced this one"),
      );
      pending.watch(signal);
    });
    if (this.#state !== "PreparingRebalance") this.#prepareRebalance(now, `${member.id} joined`);
    this.#completeIfReady(now);
    return result;
  }

  /**
   * A heartbeat: REBALANCE_IN_PROGRESS while the members must rejoin, ILLEGAL_GENERATION for a
   * generation that is over, UNKNOWN_MEMBER for a member the group does not have.
   */
  heartbeat(memberId: string, generation: number, now: number): void {
    const member = this.#member(memberId);
    member.lastSeen = now;
    if (this.#state === "Stable" && this.#topicsChanged()) {
      this.#prepareRebalance(now, "partition count changed");
    }
    if (this.#state === "PreparingRebalance") {
      throw new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, `group "${this.name}" is rebalancing: rejoin`);
    }
    if (generation !== this.#generation || member.isNew) throw this.#illegalGeneration(generation);
  }

  leave(memberId: string, now: number): void {
    this.#remove(this.#member(memberId), now, "left the group");
  }

  /** Throws unless the member owns the partition in this generation (the fetch path: no allocation). */
  checkOwner(memberId: string, generation: number, topic: string, partition: number): void {
    const member = this.#members.get(memberId);
    if (member === undefined) throw unknownMember(this.name, memberId);
    if (generation !== this.#generation || member.isNew) throw this.#illegalGeneration(generation);
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
    if (memberId === "" && generation === 0) {
      if (this.#members.size > 0) {
        throw new ConchError(
          ErrorCode.GROUP_NOT_EMPTY,
          `group "${this.name}" has ${this.#members.size} member(s): only they may commit`,
        );
      }
      return;
    }
    const member = this.#member(memberId);
    for (const p of partitions) this.checkOwner(memberId, generation, p.topic, p.partition);
    if (generation !== this.#generation || member.isNew) throw this.#illegalGeneration(generation);
    member.lastSeen = now;
  }

  /** Expires sessions and ends a rebalance whose time is up. Called by the coordinator's sweep. */
  tick(now: number): void {
    if (this.#state === "PreparingRebalance" && now >= this.#rebalanceDeadline) {
      for (const m of [...this.#members.values()]) {
        if (m.pendingJoin === null) {
          this.#logger.info({ group: this.name, member: m.id }, "member dropped: did not rejoin in time");
          this.#members.delete(m.id);
        }
      }
      this.#complete(now);
      return;
    }
    for (const m of [...this.#members.values()]) {
      if (m.expired(now)) this.#remove(m, now, `missed its heartbeats for ${m.sessionTimeoutMs} ms`);
    }
  }

  /** Answers every waiting join with `err` (the broker is stopping). */
  abortJoins(err: ConchError): void {
    for (const m of this.#members.values()) {
      const pending = m.pendingJoin;
      m.pendingJoin = null;
      pending?.reject(err);
    }
  }

  #member(memberId: string): GroupMember {
    const member = this.#members.get(memberId);
    if (member === undefined) throw unknownMember(this.name, memberId);
    return member;
  }

  #remove(member: GroupMember, now: number, why: string): void {
    this.#members.delete(member.id);
    this.#logger.info({ group: this.name, member: member.id }, `member removed: ${why}`);
    const pending = member.pendingJoin;
    member.pendingJoin = null;
    pending?.reject(unknownMember(this.name, member.id));
    if (this.#state === "Stable") this.#prepareRebalance(now, `${member.id} ${why}`);
    this.#completeIfReady(now);
  }

  /** The connection of a waiting join closed. */
  #abandon(member: GroupMember, pending: PendingJoin, now: number): void {
    if (member.pendingJoin !== pending) return;
    member.pendingJoin = null;
    pending.reject(new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "join abandoned: the connection closed"));
    if (member.isNew) {
      // It never learnt its id, so it can never come back as this member.
      this.#members.delete(member.id);
      this.#completeIfReady(now);
    } else {
      // Its session runs from now: it may reconnect and rejoin before it ends.
      member.lastSeen = now;
    }
  }

  #prepareRebalance(now: number, why: string): void {
    this.#state = "PreparingRebalance";
    let timeout = 0;
    for (const m of this.#members.values()) timeout = Math.max(timeout, m.rebalanceTimeoutMs);
    this.#rebalanceDeadline = now + timeout;
    this.#logger.info({ group: this.name, generation: this.#generation }, `rebalancing: ${why}`);
  }

  #completeIfReady(now: number): void {
    if (this.#state !== "PreparingRebalance") return;
    for (const m of this.#members.values()) if (m.pendingJoin === null) return;
    this.#complete(now);
  }

  /** A new generation: the assignment for the members present, and every waiting join answered. */
  #complete(now: number): void {
    this.#generation = this.#generation === MAX_GENERATION ? 1 : this.#generation + 1;
    const members = [...this.#members.values()];
    if (members.length === 0) {
      this.#state = "Empty";
      this.#counts.clear();
      this.#logger.info({ group: this.name, generation: this.#generation }, "group is empty");
      return;
    }
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
    for (const m of members) {
      m.setOwned(assignment.get(m.id) ?? new Map());
      m.isNew = false;
      m.lastSeen = now;
    }
    this.#state = "Stable";
    this.#logger.info(
      { group: this.name, generation: this.#generation, members: members.length, strategy },
      "rebalance complete",
    );
    for (const m of members) {
      const pending = m.pendingJoin;
      m.pendingJoin = null;
      pending?.resolve(this.#resultFor(m));
    }
  }

  #resultFor(member: GroupMember): JoinResult {
    return {
      generation: this.#generation,
      memberId: member.id,
      strategy: this.#strategy === "" ? member.strategy : this.#strategy,
      assignment: member.assignment(),
    };
  }

  #topicsChanged(): boolean {
    for (const [topic, n] of this.#counts) if (this.#partitionCount(topic) !== n) return true;
    return false;
  }

  #illegalGeneration(generation: number): ConchError {
    return new ConchError(
      ErrorCode.ILLEGAL_GENERATION,
      `generation ${generation} of group "${this.name}" is over (now ${this.#generation}): rejoin`,
    );
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

export function unknownMember(group: string, memberId: string): ConchError {
  return new ConchError(ErrorCode.UNKNOWN_MEMBER, `group "${group}" has no member "${memberId}": join again`);
}

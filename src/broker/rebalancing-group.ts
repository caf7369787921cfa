/**
 * What every kind of consumer group shares (docs/groups.md): members that join and are answered
 * when a rebalance completes, generations, sessions that run out, and the rebalance timeout that
 * drops members who did not rejoin. A Conch group (group.ts) assigns partitions itself when a
 * rebalance completes; a Kafka group (group-kafka.ts) hands its leader the members' metadata and
 * waits for the leader's assignment. Each says what completing a rebalance means (`assign`), what
 * a member is told (`resultFor`) and what else is answered when a member goes (`forget`).
 *
 * Time is whatever clock the coordinator passes in (milliseconds); nothing here reads a clock or
 * starts a timer, so tests can drive it step by step.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { GroupWait } from "./group-wait.js";

/** A join the group holds until its rebalance completes. */
export interface JoinWaiter<R> {
  resolve(result: R): void;
  reject(err: ConchError): void;
}

/** What the shared state machine needs of a member. */
export interface RebalancingMember<R> {
  readonly id: string;
  /** Order of arrival in the group: the longest-standing member wins ties. */
  readonly since: number;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /** Clock time of the last join, heartbeat, sync or commit. */
  lastSeen: number;
  /** True until the member's first join completes: it owns nothing and knows no generation yet. */
  isNew: boolean;
  pendingJoin: JoinWaiter<R> | null;
  /** Whether its session ran out; a member waiting in a join never expires. */
  expired(now: number): boolean;
}

/** A member id is the client id (cut to this many characters) and a random UUID. */
const MAX_ID_PREFIX = 64;

export abstract class RebalancingGroup<S extends string, M extends RebalancingMember<R>, R> {
  readonly name: string;
  protected status: S | "Empty" | "PreparingRebalance" = "Empty";
  #generation = 0;
  readonly #maxGeneration: number;
  protected readonly roster = new Map<string, M>();
  protected arrivals = 0;
  #rebalanceDeadline = 0;
  protected readonly logger: Logger;

  /** `maxGeneration`: the largest generation the wire can carry; after it the count starts again at 1. */
  constructor(name: string, logger: Logger, maxGeneration: number) {
    this.name = name;
    this.logger = logger;
    this.#maxGeneration = maxGeneration;
  }

  get generation(): number {
    return this.#generation;
  }

  get memberCount(): number {
    return this.roster.size;
  }

  /** Members ordered by id. */
  members(): M[] {
    return [...this.roster.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Expires sessions and ends a rebalance whose time is up. Called by the coordinator's sweep. */
  tick(now: number): void {
    if (this.status === "PreparingRebalance" && now >= this.#rebalanceDeadline) {
      for (const m of [...this.roster.values()]) {
        if (m.pendingJoin === null) {
          this.logger.info({ group: this.name, member: m.id }, "member dropped: did not rejoin in time");
          this.drop(m);
        }
      }
      this.#complete(now);
      return;
    }
    for (const m of [...this.roster.values()]) {
      if (m.expired(now)) this.remove(m, now, `missed its heartbeats for ${m.sessionTimeoutMs} ms`);
    }
  }

  /** What completing a rebalance does with the members present (at least one); returns the new state. */
  protected abstract assign(members: readonly M[], now: number): S;
  /** What a member's join is answered with once the rebalance completed. */
  protected abstract resultFor(member: M): R;
  /** Answers whatever else the member waits in, besides its join, when it is taken out. */
  protected forget(_member: M): void {}
  /** A rebalance starts: whatever waits on the old generation is answered. */
  protected onPrepare(): void {}
  /** The last member left as a rebalance completed. */
  protected onEmpty(): void {}

  protected newMemberId(clientId: string): string {
    return `${clientId === "" ? "member" : clientId.slice(0, MAX_ID_PREFIX)}-${randomUUID()}`;
  }

  protected member(memberId: string): M {
    const member = this.roster.get(memberId);
    if (member === undefined) throw unknownMember(this.name, memberId);
    return member;
  }

  /**
   * Holds the member's join until the rebalance this starts (or the one running) completes;
   * `signal` ends the wait when the connection closes.
   */
  protected waitForRebalance(member: M, now: number, signal: AbortSignal | undefined): Promise<R> {
    const result = new Promise<R>((resolve, reject) => {
      const previous = member.pendingJoin;
      const pending = new GroupWait<R>(resolve, reject, () => this.#abandon(member, pending, now));
      member.pendingJoin = pending;
      previous?.reject(
        new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "a newer join of the same member replaced this one"),
      );
      pending.watch(signal);
    });
    if (this.status !== "PreparingRebalance") this.prepareRebalance(now, `${member.id} joined`);
    this.#completeIfReady(now);
    return result;
  }

  /**
   * memberId "" with generation 0 is a commit on behalf of no member, allowed only in a group
   * without members: true when the commit is that one (and allowed).
   */
  protected commitWithoutMember(memberId: string, generation: number): boolean {
    if (memberId !== "" || generation !== 0) return false;
    if (this.roster.size > 0) {
      throw new ConchError(
        ErrorCode.GROUP_NOT_EMPTY,
        `group "${this.name}" has ${this.roster.size} member(s): only they may commit`,
      );
    }
    return true;
  }

  /** Throws ILLEGAL_GENERATION unless the generation is the current one and the member has joined it. */
  protected checkGeneration(member: M, generation: number): void {
    if (generation !== this.#generation || member.isNew) throw this.illegalGeneration(generation);
  }

  protected prepareRebalance(now: number, why: string): void {
    this.status = "PreparingRebalance";
    this.onPrepare();
    let timeout = 0;
    for (const m of this.roster.values()) timeout = Math.max(timeout, m.rebalanceTimeoutMs);
    this.#rebalanceDeadline = now + timeout;
    this.logger.info({ group: this.name, generation: this.#generation }, `rebalancing: ${why}`);
  }

  /** Takes a member out and answers whatever it waits in. */
  protected drop(member: M): void {
    this.roster.delete(member.id);
    const join = member.pendingJoin;
    member.pendingJoin = null;
    join?.reject(unknownMember(this.name, member.id));
    this.forget(member);
  }

  protected remove(member: M, now: number, why: string): void {
    this.drop(member);
    this.logger.info({ group: this.name, member: member.id }, `member removed: ${why}`);
    if (this.status !== "PreparingRebalance") this.prepareRebalance(now, `${member.id} ${why}`);
    this.#completeIfReady(now);
  }

  protected rebalancing(): ConchError {
    return new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, `group "${this.name}" is rebalancing: rejoin`);
  }

  protected illegalGeneration(generation: number): ConchError {
    return new ConchError(
      ErrorCode.ILLEGAL_GENERATION,
      `generation ${generation} of group "${this.name}" is over (now ${this.#generation}): rejoin`,
    );
  }

  /** The connection of a waiting join closed. */
  #abandon(member: M, pending: JoinWaiter<R>, now: number): void {
    if (member.pendingJoin !== pending) return;
    member.pendingJoin = null;
    pending.reject(new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "join abandoned: the connection closed"));
    if (member.isNew) {
      // It never learnt its id, so it can never come back as this member.
      this.drop(member);
      this.#completeIfReady(now);
    } else {
      // Its session runs from now: it may reconnect and rejoin before it ends.
      member.lastSeen = now;
    }
  }

  #completeIfReady(now: number): void {
    if (this.status !== "PreparingRebalance") return;
    for (const m of this.roster.values()) if (m.pendingJoin === null) return;
    this.#complete(now);
  }

  /** A new generation for the members present, and every waiting join answered. */
  #complete(now: number): void {
    this.#generation = this.#generation === this.#maxGeneration ? 1 : this.#generation + 1;
    const members = [...this.roster.values()];
    if (members.length === 0) {
      this.status = "Empty";
      this.onEmpty();
      this.logger.info({ group: this.name, generation: this.#generation }, "group is empty");
      return;
    }
    for (const m of members) {
      m.isNew = false;
      m.lastSeen = now;
    }
    this.status = this.assign(members, now);
    for (const m of members) {
      const pending = m.pendingJoin;
      m.pendingJoin = null;
      pending?.resolve(this.resultFor(m));
    }
  }
}

export function unknownMember(group: string, memberId: string): ConchError {
  return new ConchError(ErrorCode.UNKNOWN_MEMBER, `group "${group}" has no member "${memberId}": join again`);
}

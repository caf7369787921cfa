/**
 * A group of Kafka clients (docs/groups.md, "Kafka groups"): the members assign partitions among
 * themselves. The coordinator only runs the membership: it picks a protocol every member supports
 * and a leader, hands the leader every member's metadata when a rebalance completes, and hands
 * each member the share of the leader's assignment (SyncGroup) meant for it. Metadata and
 * assignments are opaque bytes here.
 *
 *   Empty --join--> PreparingRebalance --all rejoined, or the rebalance timeout--> CompletingRebalance
 *   CompletingRebalance --the leader's sync--> Stable
 *   Stable or CompletingRebalance --a member joins, leaves, the leader rejoins or a session ends--> PreparingRebalance
 *   PreparingRebalance --the last member leaves--> Empty
 *
 * What it shares with a Conch group is in rebalancing-group.ts; time is what the coordinator passes in.
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { GroupWait } from "./group-wait.js";
import { RebalancingGroup, unknownMember } from "./rebalancing-group.js";

export type KafkaGroupStateName = "Empty" | "PreparingRebalance" | "CompletingRebalance" | "Stable";

export interface KafkaProtocol {
  name: string;
  metadata: Uint8Array;
}

/** A Kafka join, validated. */
export interface KafkaJoinSpec {
  /** "" for a new member. */
  memberId: string;
  clientId: string;
  protocolType: string;
  /** In the member's order of preference; at least one. */
  protocols: readonly KafkaProtocol[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /**
   * JoinGroup v4+: a new member is first given an id and told to join again with it (KIP-394), so
   * that a member whose first join times out does not leave an unknown member behind.
   */
  requireKnownMemberId: boolean;
}

export type KafkaJoinResult =
  | { kind: "memberIdRequired"; memberId: string }
  | {
      kind: "joined";
      generation: number;
      memberId: string;
      protocol: string;
      leader: string;
      /** Every member's metadata for the chosen protocol, for the leader only; empty for the others. */
      members: readonly { memberId: string; metadata: Uint8Array }[];
    };

type JoinedResult = Extract<KafkaJoinResult, { kind: "joined" }>;

export class KafkaMember {
  readonly id: string;
  /** Order of arrival: the longest-standing member becomes the leader. */
  readonly since: number;
  clientId: string;
  protocols: readonly KafkaProtocol[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  lastSeen: number;
  /** True until the member's first join completes. */
  isNew = true;
  pendingJoin: GroupWait<JoinedResult> | null = null;
  pendingSync: GroupWait<Uint8Array> | null = null;
  /** What the leader assigned it in the current generation (empty until the sync). */
  assignment: Uint8Array = EMPTY;

  constructor(id: string, since: number, spec: KafkaJoinSpec, now: number) {
    this.id = id;
    this.since = since;
    this.clientId = spec.clientId;
    this.protocols = spec.protocols;
    this.sessionTimeoutMs = spec.sessionTimeoutMs;
    this.rebalanceTimeoutMs = spec.rebalanceTimeoutMs;
    this.lastSeen = now;
  }

  metadataFor(protocol: string): Uint8Array {
    return this.protocols.find((p) => p.name === protocol)?.metadata ?? EMPTY;
  }

  /** A member waiting in a join is never expired; one waiting in a sync is (the leader may be gone). */
  expired(now: number): boolean {
    return this.pendingJoin === null && now - this.lastSeen > this.sessionTimeoutMs;
  }
}

const EMPTY = new Uint8Array(0);
/**
 * Ids handed out and not yet joined with, per group: a client that asks again and again without
 * ever coming back would otherwise grow the table for a whole session timeout. Past this, the
 * oldest id lapses early (its member, if it does come back, is told UNKNOWN_MEMBER and starts over).
 */
const MAX_PENDING_IDS = 1024;
/** Kafka generations are int32. */
const MAX_GENERATION = 0x7fffffff;

export class KafkaGroup extends RebalancingGroup<
  "CompletingRebalance" | "Stable",
  KafkaMember,
  JoinedResult
> {
  #protocolType = "";
  /** The protocol of the current generation; "" before the first. */
  #protocol = "";
  #leader = "";
  /** Ids handed out with MEMBER_ID_REQUIRED, not yet joined with: id -> when they lapse. */
  #pendingIds = new Map<string, number>();

  constructor(name: string, logger: Logger) {
    super(name, logger, MAX_GENERATION);
  }

  get state(): KafkaGroupStateName {
    return this.status;
  }

  get protocolType(): string {
    return this.#protocolType;
  }

  get protocol(): string {
    return this.#protocol;
  }

  get leader(): string {
    return this.#leader;
  }

  /** Whether the group holds anything worth keeping in memory: members or ids handed out. */
  get live(): boolean {
    return this.roster.size > 0 || this.#pendingIds.size > 0;
  }

  join(spec: KafkaJoinSpec, now: number, signal?: AbortSignal): Promise<KafkaJoinResult> {
    this.#checkProtocols(spec);
    let member = spec.memberId === "" ? undefined : this.roster.get(spec.memberId);
    let changed = false;
    if (spec.memberId === "") {
      const id = this.newMemberId(spec.clientId);
      if (spec.requireKnownMemberId) {
        if (this.#pendingIds.size >= MAX_PENDING_IDS) {
          this.#pendingIds.delete(this.#pendingIds.keys().next().value as string);
        }
        this.#pendingIds.set(id, now + spec.sessionTimeoutMs);
        return Promise.resolve({ kind: "memberIdRequired", memberId: id });
      }
      member = this.#add(id, spec, now);
    } else if (member === undefined) {
      if (!this.#pendingIds.delete(spec.memberId)) throw unknownMember(this.name, spec.memberId);
      member = this.#add(spec.memberId, spec, now);
    } else {
      changed = !sameProtocols(member.protocols, spec.protocols);
      member.clientId = spec.clientId;
      member.protocols = spec.protocols;
      member.sessionTimeoutMs = spec.sessionTimeoutMs;
      member.rebalanceTimeoutMs = spec.rebalanceTimeoutMs;
      member.lastSeen = now;
    }
    // A follower that only lost the answer to its join gets it again; the leader rejoining a stable
    // group means it wants a new assignment (its topics' metadata changed), as in Kafka.
    const settled = this.status === "Stable" || this.status === "CompletingRebalance";
    if (settled && !changed && !member.isNew && (member.id !== this.#leader || this.status !== "Stable")) {
      return Promise.resolve(this.resultFor(member));
    }
    return this.waitForRebalance(member, now, signal);
  }

  /**
   * A member's SyncGroup: the leader's carries every member's assignment. Resolves with the
   * member's own assignment once the leader's has arrived (at once in a stable group).
   */
  sync(
    memberId: string,
    generation: number,
    assignments: readonly { memberId: string; assignment: Uint8Array }[],
    now: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    const member = this.member(memberId);
    member.lastSeen = now;
    this.checkGeneration(member, generation);
    if (this.status === "PreparingRebalance") throw this.rebalancing();
    if (this.status === "Stable") return Promise.resolve(member.assignment);
    const result = new Promise<Uint8Array>((resolve, reject) => {
      const previous = member.pendingSync;
      const pending = new GroupWait<Uint8Array>(resolve, reject, () => {
        if (member.pendingSync !== pending) return;
        member.pendingSync = null;
        pending.reject(
          new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "sync abandoned: the connection closed"),
        );
      });
      member.pendingSync = pending;
      previous?.reject(
        new ConchError(ErrorCode.REBALANCE_IN_PROGRESS, "a newer sync of the same member replaced this one"),
      );
      pending.watch(signal);
    });
    if (memberId === this.#leader) {
      const given = new Map<string, Uint8Array>();
      for (const a of assignments) given.set(a.memberId, a.assignment);
      for (const m of this.roster.values()) m.assignment = given.get(m.id) ?? EMPTY;
      this.status = "Stable";
      this.logger.info(
        { group: this.name, generation: this.generation },
        "assignment received from the leader",
      );
      for (const m of this.roster.values()) {
        const pending = m.pendingSync;
        m.pendingSync = null;
        pending?.resolve(m.assignment);
      }
    }
    return result;
  }

  /** REBALANCE_IN_PROGRESS while the members must rejoin; else the generation must be current. */
  heartbeat(memberId: string, generation: number, now: number): void {
    const member = this.member(memberId);
    member.lastSeen = now;
    if (this.status === "PreparingRebalance") throw this.rebalancing();
    this.checkGeneration(member, generation);
  }

  leave(memberId: string, now: number): void {
    if (this.#pendingIds.delete(memberId)) return;
    this.remove(this.member(memberId), now, "left the group");
  }

  /**
   * A member's commit: its generation must be the current one, and the group not waiting for the
   * leader's assignment (who owns what is not known then). memberId "" with generation 0 is a
   * commit on behalf of no member, for a group without members.
   */
  checkCommit(memberId: string, generation: number, now: number): void {
    if (this.commitWithoutMember(memberId, generation)) return;
    const member = this.member(memberId);
    this.checkGeneration(member, generation);
    if (this.status === "CompletingRebalance") throw this.rebalancing();
    member.lastSeen = now;
  }

  override tick(now: number): void {
    for (const [id, until] of this.#pendingIds) if (now >= until) this.#pendingIds.delete(id);
    super.tick(now);
  }

  abortWaits(err: ConchError): void {
    for (const m of this.roster.values()) {
      const join = m.pendingJoin;
      const sync = m.pendingSync;
      m.pendingJoin = null;
      m.pendingSync = null;
      join?.reject(err);
      sync?.reject(err);
    }
  }

  /** Members waiting for the old generation's assignment must rejoin instead. */
  protected override onPrepare(): void {
    for (const m of this.roster.values()) {
      const sync = m.pendingSync;
      m.pendingSync = null;
      sync?.reject(this.rebalancing());
    }
  }

  protected override onEmpty(): void {
    this.#protocol = "";
    this.#leader = "";
  }

  /** A protocol and a leader for the members present; then the group waits for the leader's sync. */
  protected override assign(members: readonly KafkaMember[]): "CompletingRebalance" {
    this.#protocol = chooseProtocol(members);
    if (!this.roster.has(this.#leader)) {
      this.#leader = members.reduce((a, b) => (b.since < a.since ? b : a)).id;
    }
    for (const m of members) m.assignment = EMPTY;
    this.logger.info(
      { group: this.name, generation: this.generation, members: members.length, protocol: this.#protocol },
      "rebalance complete: waiting for the leader's assignment",
    );
    return "CompletingRebalance";
  }

  protected override resultFor(member: KafkaMember): JoinedResult {
    const isLeader = member.id === this.#leader;
    return {
      kind: "joined",
      generation: this.generation,
      memberId: member.id,
      protocol: this.#protocol,
      leader: this.#leader,
      members: isLeader
        ? this.members().map((m) => ({ memberId: m.id, metadata: m.metadataFor(this.#protocol) }))
        : [],
    };
  }

  /** A member taken out is no longer the leader, and its sync is answered. */
  protected override forget(member: KafkaMember): void {
    if (this.#leader === member.id) this.#leader = "";
    const sync = member.pendingSync;
    member.pendingSync = null;
    sync?.reject(unknownMember(this.name, member.id));
  }

  /** A new member's protocols must match the group's type and share one with every member. */
  #checkProtocols(spec: KafkaJoinSpec): void {
    if (this.roster.size === 0) return;
    if (spec.protocolType !== this.#protocolType) {
      throw new ConchError(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        `group "${this.name}" has protocol type "${this.#protocolType}", not "${spec.protocolType}"`,
      );
    }
    const others = [...this.roster.values()].filter((m) => m.id !== spec.memberId);
    if (others.length === 0) return;
    const common = spec.protocols.some((p) =>
      others.every((m) => m.protocols.some((q) => q.name === p.name)),
    );
    if (!common) {
      throw new ConchError(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        `group "${this.name}": none of ${spec.protocols.map((p) => p.name).join(", ")} is supported by every member`,
      );
    }
  }

  #add(id: string, spec: KafkaJoinSpec, now: number): KafkaMember {
    const member = new KafkaMember(id, this.arrivals++, spec, now);
    if (this.roster.size === 0) this.#protocolType = spec.protocolType;
    this.roster.set(id, member);
    return member;
  }
}

/**
 * Among the protocols every member supports, each member votes for the one it prefers most; the
 * most votes win, a tie going to the protocol listed first by the longest-standing member (Kafka
 * breaks ties arbitrarily; this makes the choice repeatable).
 */
function chooseProtocol(members: readonly KafkaMember[]): string {
  const oldest = [...members].sort((a, b) => a.since - b.since);
  const candidates = oldest[0]!.protocols
    .map((p) => p.name)
    .filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
  const votes = new Map<string, number>();
  for (const m of members) {
    const pick = m.protocols.find((p) => candidates.includes(p.name));
    if (pick !== undefined) votes.set(pick.name, (votes.get(pick.name) ?? 0) + 1);
  }
  let best = candidates[0] ?? "";
  for (const name of candidates) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name;
  return best;
}

function sameProtocols(a: readonly KafkaProtocol[], b: readonly KafkaProtocol[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => p.name === b[i]!.name && Buffer.from(p.metadata).equals(b[i]!.metadata))
  );
}

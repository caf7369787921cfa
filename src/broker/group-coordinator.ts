/**
 * The group coordinator: one per broker, for every consumer group (docs/groups.md). It keeps each
 * group's membership (group.ts), sweeps expired sessions and overdue rebalances on one coarse
 * timer, answers the ownership check of a member's fetch, and stores committed offsets through the
 * OffsetStore (`__consumer_offsets`).
 */
import { type Logger, pino } from "pino";
import { checkDurationMs } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { checkTopicName } from "../format/topic-name.js";
import type { OffsetSpec } from "./broker-requests.js";
import { ConsumerGroup, type GroupStateName } from "./group.js";
import { parseStrategy } from "./group-assignor.js";
import type { JoinResult, TopicPartitions } from "./group-member.js";
import { type OffsetEntry, type OffsetLogHost, OffsetStore } from "./offset-store.js";
import type { TopicDescription } from "./topic.js";

export type { GroupStateName } from "./group.js";
export type { AssignmentStrategy } from "./group-assignor.js";
export type { JoinResult, TopicPartitions } from "./group-member.js";
export type { OffsetEntry } from "./offset-store.js";

/** What the coordinator needs from the broker (the Broker is one). */
export interface GroupHost extends OffsetLogHost {
  describeTopic(name: string): TopicDescription;
  listOffsets(
    topic: string,
    partition: number,
    spec: OffsetSpec,
  ): Promise<{ found: boolean; offset: number }>;
}

export interface GroupCoordinatorOptions {
  logger?: Logger;
  /** The clock sessions and rebalances are timed with, in ms; default `performance.now`. */
  now?: () => number;
  /** How often sessions and rebalance deadlines are checked; 0 = never (call `tick`). Default 100 ms. */
  sweepIntervalMs?: number;
}

export interface JoinGroupRequest {
  group: string;
  /** "" for a new member. */
  memberId: string;
  clientId: string;
  topics: readonly string[];
  strategy: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
}

export type ResetTarget =
  | { to: "earliest" }
  | { to: "latest" }
  | { to: "timestamp"; timestampMs: number }
  | { to: "offset"; offset: number };

export interface GroupListing {
  group: string;
  state: GroupStateName;
  members: number;
}

export interface GroupMemberDescription {
  memberId: string;
  clientId: string;
  assignment: TopicPartitions[];
}

export interface GroupPartitionDescription {
  topic: string;
  partition: number;
  /** "" when no member owns it. */
  owner: string;
  /** -1: none committed. */
  committed: number;
  highWatermark: number;
  /** highWatermark - committed, or -1 when nothing is committed. */
  lag: number;
}

export interface GroupDescription {
  group: string;
  state: GroupStateName;
  generation: number;
  strategy: string;
  members: GroupMemberDescription[];
  partitions: GroupPartitionDescription[];
}

export const MIN_GROUP_TIMEOUT_MS = 100;
export const MAX_GROUP_TIMEOUT_MS = 60 * 60 * 1000;
const MAX_GROUP_NAME_BYTES = 255;

export class GroupCoordinator {
  #host: GroupHost;
  #logger: Logger;
  #now: () => number;
  #groups = new Map<string, ConsumerGroup>();
  #offsets: OffsetStore;
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(host: GroupHost, options: GroupCoordinatorOptions = {}) {
    this.#host = host;
    this.#logger = options.logger ?? pino({ enabled: false });
    this.#now = options.now ?? (() => performance.now());
    this.#offsets = new OffsetStore(host, this.#logger);
    const every = options.sweepIntervalMs ?? 100;
    if (every > 0) {
      this.#sweep = setInterval(() => this.tick(), every);
      this.#sweep.unref();
    }
  }

  /** Replays the committed offsets. Call once, before serving. */
  load(): Promise<void> {
    return this.#offsets.load();
  }

  // ---- membership ----------------------------------------------------------------------------

  /** Joins (or rejoins) a group; resolves with the member's assignment once the rebalance completes. */
  join(req: JoinGroupRequest, signal?: AbortSignal): Promise<JoinResult> {
    try {
      this.#checkOpen();
      checkGroupName(req.group);
      const topics = [...new Set(req.topics)].sort();
      if (topics.length === 0)
        throw new ConchError(ErrorCode.INVALID_REQUEST, "a member must subscribe to a topic");
      for (const t of topics) checkTopicName(t);
      const spec = {
        memberId: req.memberId,
        clientId: req.clientId,
        topics,
        strategy: parseStrategy(req.strategy),
        sessionTimeoutMs: checkDurationMs(
          "sessionTimeoutMs",
          req.sessionTimeoutMs,
          MIN_GROUP_TIMEOUT_MS,
          MAX_GROUP_TIMEOUT_MS,
        ),
        rebalanceTimeoutMs: checkDurationMs(
          "rebalanceTimeoutMs",
          req.rebalanceTimeoutMs,
          MIN_GROUP_TIMEOUT_MS,
          MAX_GROUP_TIMEOUT_MS,
        ),
      };
      let group = this.#groups.get(req.group);
      if (group === undefined) {
        if (req.memberId !== "") {
          throw new ConchError(
            ErrorCode.UNKNOWN_MEMBER,
            `group "${req.group}" has no member "${req.memberId}"`,
          );
        }
        group = new ConsumerGroup(req.group, (topic) => this.#partitionCount(topic), this.#logger);
        this.#groups.set(req.group, group);
      }
      return group.join(spec, this.#now(), signal);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  heartbeat(group: string, memberId: string, generation: number): void {
    this.#checkOpen();
    this.#group(group, memberId).heartbeat(memberId, generation, this.#now());
  }

  leave(group: string, memberId: string): void {
    this.#checkOpen();
    this.#group(group, memberId).leave(memberId, this.#now());
  }

  /**
   * The check of a fetch as the owner: UNKNOWN_MEMBER or ILLEGAL_GENERATION unless the member owns
   * the partition in that generation. On the fetch path: no allocation unless it throws.
   */
  checkOwner(group: string, memberId: string, generation: number, topic: string, partition: number): void {
    this.#group(group, memberId).checkOwner(memberId, generation, topic, partition);
  }

  /** Sessions and rebalance deadlines; the sweep timer calls it, tests may too. */
  tick(): void {
    if (this.#closed) return;
    const now = this.#now();
    for (const [name, group] of this.#groups) {
      if (group.memberCount > 0) group.tick(now);
      // An empty group lives on only in its committed offsets: its ids and generation are no longer
      // needed, since member ids are never reused.
      else this.#groups.delete(name);
    }
  }

  // ---- offsets -------------------------------------------------------------------------------

  /**
   * Stores committed offsets (the next offset to read per partition), all or none, once the member
   * is checked (see ConsumerGroup.checkCommit). Resolves when they are fsynced.
   */
  commit(
    group: string,
    memberId: string,
    generation: number,
    offsets: readonly OffsetEntry[],
  ): Promise<void> {
    try {
      this.#checkOpen();
      checkGroupName(group);
      const g = this.#groups.get(group);
      if (g !== undefined) g.checkCommit(memberId, generation, offsets, this.#now());
      else if (memberId !== "" || generation !== 0) {
        throw new ConchError(ErrorCode.UNKNOWN_MEMBER, `group "${group}" has no member "${memberId}"`);
      }
      for (const o of offsets) {
        this.#host.partition(o.topic, o.partition);
        if (!Number.isSafeInteger(o.offset) || o.offset < 0) {
          throw new ConchError(ErrorCode.INVALID_REQUEST, `offset ${o.offset} is not a valid offset`);
        }
      }
      return this.#offsets.commit(group, offsets, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Committed offsets (-1: none) of the partitions asked for, or every one the group has when none are. */
  fetchOffsets(group: string, partitions: readonly { topic: string; partition: number }[]): OffsetEntry[] {
    this.#checkOpen();
    checkGroupName(group);
    if (partitions.length === 0) return this.#offsets.groupOffsets(group);
    return partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      offset: this.#offsets.get(group, p.topic, p.partition),
    }));
  }

  /**
   * Moves the group's committed offsets for every partition of a topic. Refused with UNKNOWN_GROUP
   * for a group that does not exist, and with GROUP_NOT_EMPTY while the group has members: they
   * would go on from their own positions and overwrite it.
   */
  async resetOffsets(group: string, topic: string, target: ResetTarget): Promise<OffsetEntry[]> {
    this.#checkOpen();
    checkGroupName(group);
    // A reset never creates a group: a mistyped name would otherwise become a group of its own.
    if (!this.#groups.has(group) && !this.#offsets.hasGroup(group)) throw unknownGroup(group);
    this.#checkNoMembers(group, "reset its offsets");
    const partitions = this.#host.describeTopic(topic).partitions;
    const entries: OffsetEntry[] = [];
    for (const p of partitions) {
      let offset: number;
      switch (target.to) {
        case "earliest":
          offset = p.logStartOffset;
          break;
        case "latest":
          offset = p.highWatermark;
          break;
        case "offset":
          offset = Math.min(Math.max(target.offset, p.logStartOffset), p.highWatermark);
          break;
        case "timestamp": {
          const found = await this.#host.listOffsets(topic, p.partition, {
            kind: "timestamp",
            timestampMs: target.timestampMs,
          });
          offset = found.offset;
          break;
        }
      }
      entries.push({ topic, partition: p.partition, offset });
    }
    // A member may have joined while the timestamps were looked up.
    this.#checkNoMembers(group, "reset its offsets");
    await this.#offsets.commit(group, entries, Date.now());
    this.#logger.info({ group, topic, to: target.to }, "offsets reset");
    return entries;
  }

  /** Forgets a group without members and every offset it committed (tombstones). */
  async deleteGroup(group: string): Promise<void> {
    this.#checkOpen();
    checkGroupName(group);
    this.#checkNoMembers(group, "be deleted");
    if (!this.#groups.has(group) && !this.#offsets.hasGroup(group)) throw unknownGroup(group);
    this.#groups.delete(group);
    await this.#offsets.deleteGroup(group, Date.now());
    this.#logger.info({ group }, "group deleted");
  }

  // ---- description ---------------------------------------------------------------------------

  /** Every group with members or committed offsets, sorted by name. */
  listGroups(): GroupListing[] {
    this.#checkOpen();
    const names = new Set([...this.#groups.keys(), ...this.#offsets.groups()]);
    return [...names].sort().map((name) => {
      const g = this.#groups.get(name);
      return { group: name, state: g?.state ?? "Empty", members: g?.memberCount ?? 0 };
    });
  }

  describeGroup(group: string): GroupDescription {
    this.#checkOpen();
    checkGroupName(group);
    const g = this.#groups.get(group);
    if (g === undefined && !this.#offsets.hasGroup(group)) throw unknownGroup(group);
    const members = g?.members() ?? [];
    const owners = new Map<string, string>();
    const topics = new Set<string>();
    for (const m of members) {
      for (const t of m.topics) topics.add(t);
      for (const [topic, partitions] of m.owned)
        for (const p of partitions) owners.set(`${topic}:${p}`, m.id);
    }
    const committed = this.#offsets.groupOffsets(group);
    for (const c of committed) topics.add(c.topic);
    const partitions: GroupPartitionDescription[] = [];
    for (const topic of [...topics].sort()) {
      let described: TopicDescription | null = null;
      try {
        described = this.#host.describeTopic(topic);
      } catch {
        // Deleted (or not created yet): only what was committed for it is left to show.
      }
      const rows =
        described?.partitions ??
        committed.filter((c) => c.topic === topic).map((c) => ({ partition: c.partition, highWatermark: 0 }));
      for (const p of rows) {
        const offset = this.#offsets.get(group, topic, p.partition);
        partitions.push({
          topic,
          partition: p.partition,
          owner: owners.get(`${topic}:${p.partition}`) ?? "",
          committed: offset,
          highWatermark: p.highWatermark,
          lag: offset < 0 ? -1 : Math.max(0, p.highWatermark - offset),
        });
      }
    }
    return {
      group,
      state: g?.state ?? "Empty",
      generation: g?.generation ?? 0,
      strategy: g?.strategy ?? "",
      members: members.map((m) => ({ memberId: m.id, clientId: m.clientId, assignment: m.assignment() })),
      partitions,
    };
  }

  /** Stops the sweep and answers every waiting join with SHUTTING_DOWN. Later calls fail with it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweep !== null) clearInterval(this.#sweep);
    const err = shuttingDown();
    for (const g of this.#groups.values()) g.abortJoins(err);
  }

  // ---- internals -----------------------------------------------------------------------------

  #checkOpen(): void {
    if (this.#closed) throw shuttingDown();
  }

  #group(group: string, memberId: string): ConsumerGroup {
    const g = this.#groups.get(group);
    if (g === undefined) {
      throw new ConchError(ErrorCode.UNKNOWN_MEMBER, `group "${group}" has no member "${memberId}"`);
    }
    return g;
  }

  #checkNoMembers(group: string, what: string): void {
    const n = this.#groups.get(group)?.memberCount ?? 0;
    if (n > 0) {
      throw new ConchError(
        ErrorCode.GROUP_NOT_EMPTY,
        `group "${group}" has ${n} member(s); it can ${what} only when it has none`,
      );
    }
  }

  #partitionCount(topic: string): number {
    try {
      return this.#host.describeTopic(topic).partitions.length;
    } catch {
      return 0;
    }
  }
}

function checkGroupName(group: string): void {
  const bytes = Buffer.byteLength(group);
  if (bytes === 0 || bytes > MAX_GROUP_NAME_BYTES) {
    throw new ConchError(ErrorCode.INVALID_GROUP, `group names are 1 to ${MAX_GROUP_NAME_BYTES} bytes long`);
  }
}

function unknownGroup(group: string): ConchError {
  return new ConchError(ErrorCode.UNKNOWN_GROUP, `there is no group "${group}"`);
}

function shuttingDown(): ConchError {
  return new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down");
}

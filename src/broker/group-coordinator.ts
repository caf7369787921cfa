/**
 * The group coordinator: one per broker (docs/groups.md). It keeps each group's membership
 * (group.ts), sweeps expired sessions and overdue rebalances on one coarse timer, answers the
 * ownership check of a member's fetch, and stores committed offsets through the OffsetStore
 * (`__consumer_offsets`).
 *
 * A single-node broker coordinates every group. In cluster mode (docs/cluster.md, "Consumer
 * groups") a broker coordinates the groups of the offsets partitions it leads: it takes a
 * partition's groups once its commits are replayed, drops them (members waiting are told
 * NOT_COORDINATOR) when the leadership goes, and answers NOT_COORDINATOR for every other group.
 */
import { type Logger, pino } from "pino";
import { checkDurationMs, MAX_TIMER_MS } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { checkTopicName } from "../format/topic-name.js";
import type { OffsetSpec } from "./broker-requests.js";
import type { ClusterBroker, ClusterMetadata } from "./cluster-metadata.js";
import { ConsumerGroup } from "./group.js";
import { parseStrategy } from "./group-assignor.js";
import { describe, type GroupDescription, type GroupListing, groupTopics } from "./group-description.js";
import { otherKind, shuttingDown, unknownGroup } from "./group-errors.js";
import { KafkaGroup, type KafkaJoinResult } from "./group-kafka.js";
import { OffsetsLeadership } from "./group-leadership.js";
import type { JoinResult } from "./group-member.js";
import { resetPositions } from "./group-offset-reset.js";
import type { GroupPlacement } from "./group-placement.js";
import {
  checkGroupName,
  checkTimeout,
  type JoinGroupRequest,
  type KafkaJoinRequest,
  type KafkaSyncRequest,
  MAX_GROUP_TIMEOUT_MS,
  MIN_GROUP_TIMEOUT_MS,
  type ResetTarget,
} from "./group-requests.js";
import { type OffsetEntry, type OffsetLogHost, OffsetStore } from "./offset-store.js";
import { unknownMember } from "./rebalancing-group.js";
import type { TopicDescription, TopicInfo } from "./topic.js";

export type { AssignmentStrategy } from "./group-assignor.js";
export type {
  GroupDescription,
  GroupKind,
  GroupListing,
  GroupMemberDescription,
  GroupPartitionDescription,
  GroupStateName,
} from "./group-description.js";
export type { KafkaJoinResult } from "./group-kafka.js";
export type { JoinResult, TopicPartitions } from "./group-member.js";
export {
  type JoinGroupRequest,
  type KafkaJoinRequest,
  type KafkaSyncRequest,
  MAX_GROUP_TIMEOUT_MS,
  MIN_GROUP_TIMEOUT_MS,
  type ResetTarget,
} from "./group-requests.js";
export type { OffsetEntry } from "./offset-store.js";

/** What the coordinator needs from the broker (the Broker is one). */
export interface GroupHost extends OffsetLogHost {
  describeTopic(name: string): TopicDescription;
  /** Cluster mode: the cluster's topics, which a coordinator need not hold a replica of. */
  readonly cluster: ClusterMetadata | null;
  /** What a topic is, without its partitions' figures (never waits). */
  topicInfo(name: string): TopicInfo;
  /** Resolves once the figures of the topic's partitions are known (after a crash, recovered). */
  recovered(topic: string): Promise<void>;
  /** Throws UNKNOWN_TOPIC or UNKNOWN_PARTITION for a partition the broker does not have. */
  checkPartition(topic: string, partition: number): void;
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

export class GroupCoordinator {
  #host: GroupHost;
  #logger: Logger;
  #now: () => number;
  #groups = new Map<string, ConsumerGroup | KafkaGroup>();
  #offsets: OffsetStore;
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;
  /** Cluster mode: where each group's coordinator is (set with coordinateLedPartitions). */
  #placement: GroupPlacement | null = null;
  /** Cluster mode: the offsets partitions this broker leads, and so the groups it serves. */
  #leadership: OffsetsLeadership | null = null;

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

  // ---- cluster mode ----------------------------------------------------------------------------

  /**
   * Cluster mode from now on: this broker coordinates only the groups of the offsets partitions it
   * leads (none until offsetsLeaderGained), and `placement` finds the others' coordinators.
   */
  coordinateLedPartitions(placement: GroupPlacement): void {
    this.#placement = placement;
    this.#dropGroups(() => true);
    this.#leadership = new OffsetsLeadership(this.#offsets, this.#logger, (which) => this.#dropGroups(which));
  }

  /** This broker leads offsets partition `partition` (of `partitions`) now: replays it, then serves its groups. */
  async offsetsLeaderGained(partition: number, partitions: number): Promise<void> {
    if (!this.#closed) await this.#leadership?.gained(partition, partitions);
  }

  /** This broker no longer leads offsets partition `partition`: its groups are dropped, their members re-find the coordinator. */
  offsetsLeaderLost(partition: number): void {
    this.#leadership?.lost(partition);
  }

  /** Every offsets partition is lost at once (the broker fenced itself). */
  offsetsLeadershipFenced(): void {
    this.#leadership?.fenced();
  }

  /**
   * The broker coordinating `group`: null on a single node (this broker, whichever address the
   * client used), else the leader of its offsets partition (NOT_COORDINATOR while there is none).
   */
  findCoordinator(group: string): Promise<ClusterBroker> | null {
    checkGroupName(group);
    return this.#placement?.coordinator(group) ?? null;
  }

  // ---- membership ----------------------------------------------------------------------------

  /** Joins (or rejoins) a group; resolves with the member's assignment once the rebalance completes. */
  join(req: JoinGroupRequest, signal?: AbortSignal): Promise<JoinResult> {
    try {
      this.#checkCoordinator(req.group);
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
      if (group instanceof KafkaGroup) {
        if (group.live) throw otherKind(req.group, "kafka");
        group = undefined;
      }
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
    this.#checkCoordinator(group);
    this.#native(group, memberId).heartbeat(memberId, generation, this.#now());
  }

  leave(group: string, memberId: string): void {
    this.#checkCoordinator(group);
    this.#native(group, memberId).leave(memberId, this.#now());
  }

  // ---- Kafka membership (group-kafka.ts) -----------------------------------------------------

  /**
   * A Kafka member joins: resolves once the rebalance completes, with every member's metadata for
   * the leader; or at once with `memberIdRequired` for a new member that must join again with it.
   */
  kafkaJoin(req: KafkaJoinRequest, signal?: AbortSignal): Promise<KafkaJoinResult> {
    try {
      this.#checkCoordinator(req.group);
      if (req.protocolType === "" || req.protocols.length === 0) {
        throw new ConchError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          "a Kafka member must name a protocol type and at least one protocol",
        );
      }
      const spec = {
        memberId: req.memberId,
        clientId: req.clientId,
        protocolType: req.protocolType,
        // Copied: the request's bytes are views of a frame that is reused once it is answered.
        protocols: req.protocols.map((p) => ({ name: p.name, metadata: copy(p.metadata) })),
        sessionTimeoutMs: checkTimeout("session", req.sessionTimeoutMs, MAX_GROUP_TIMEOUT_MS),
        rebalanceTimeoutMs: checkTimeout("rebalance", req.rebalanceTimeoutMs, MAX_TIMER_MS),
        requireKnownMemberId: req.requireKnownMemberId,
      };
      let group = this.#groups.get(req.group);
      if (group instanceof ConsumerGroup) {
        if (group.memberCount > 0) throw otherKind(req.group, "native");
        group = undefined;
      }
      if (group === undefined) {
        if (req.memberId !== "") throw unknownMember(req.group, req.memberId);
        group = new KafkaGroup(req.group, this.#logger);
        this.#groups.set(req.group, group);
      }
      return group.join(spec, this.#now(), signal);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** A Kafka member's SyncGroup: resolves with its own assignment once the leader has sent them. */
  kafkaSync(req: KafkaSyncRequest, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      this.#checkCoordinator(req.group);
      const assignments = req.assignments.map((a) => ({
        memberId: a.memberId,
        assignment: copy(a.assignment),
      }));
      return this.#kafka(req.group, req.memberId).sync(
        req.memberId,
        req.generation,
        assignments,
        this.#now(),
        signal,
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  kafkaHeartbeat(group: string, memberId: string, generation: number): void {
    this.#checkCoordinator(group);
    this.#kafka(group, memberId).heartbeat(memberId, generation, this.#now());
  }

  kafkaLeave(group: string, memberId: string): void {
    this.#checkCoordinator(group);
    this.#kafka(group, memberId).leave(memberId, this.#now());
  }

  /**
   * The check of a fetch as the owner: UNKNOWN_MEMBER or ILLEGAL_GENERATION unless the member owns
   * the partition in that generation. On the fetch path: no allocation unless it throws.
   */
  checkOwner(group: string, memberId: string, generation: number, topic: string, partition: number): void {
    // Cluster mode: only the coordinator knows the generations. A partition's leader elsewhere
    // serves the fetch as Kafka serves every fetch; the member learns of a new generation at its
    // next heartbeat.
    if (this.#leadership !== null && !this.#leadership.serves(group)) return;
    this.#native(group, memberId).checkOwner(memberId, generation, topic, partition);
  }

  /** Sessions and rebalance deadlines; the sweep timer calls it, tests may too. */
  tick(): void {
    if (this.#closed) return;
    const now = this.#now();
    for (const [name, group] of this.#groups) {
      if (group instanceof KafkaGroup ? group.live : group.memberCount > 0) group.tick(now);
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
      this.#checkCoordinator(group);
      const g = this.#groups.get(group);
      if (g instanceof KafkaGroup) g.checkCommit(memberId, generation, this.#now());
      else if (g !== undefined) g.checkCommit(memberId, generation, offsets, this.#now());
      else if (memberId !== "" || generation !== 0) {
        throw new ConchError(ErrorCode.UNKNOWN_MEMBER, `group "${group}" has no member "${memberId}"`);
      }
      for (const o of offsets) {
        this.#checkPartition(o.topic, o.partition);
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
    this.#checkCoordinator(group);
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
    this.#checkCoordinator(group);
    // A reset never creates a group: a mistyped name would otherwise become a group of its own.
    if (!this.#groups.has(group) && !this.#offsets.hasGroup(group)) throw unknownGroup(group);
    this.#checkNoMembers(group, "reset its offsets");
    const entries = await resetPositions(this.#host, topic, target);
    // A member may have joined while the timestamps were looked up.
    this.#checkNoMembers(group, "reset its offsets");
    await this.#offsets.commit(group, entries, Date.now());
    this.#logger.info({ group, topic, to: target.to }, "offsets reset");
    return entries;
  }

  /** Forgets a group without members and every offset it committed (tombstones). */
  async deleteGroup(group: string): Promise<void> {
    this.#checkCoordinator(group);
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
      return {
        group: name,
        kind: g instanceof KafkaGroup ? "kafka" : "native",
        state: g?.state ?? "Empty",
        members: g?.memberCount ?? 0,
        protocolType: g instanceof KafkaGroup ? g.protocolType : "",
      };
    });
  }

  /**
   * The group now. After a crash, a topic whose partitions are not all recovered yet shows its
   * committed offsets with the high watermark and lag unknown (-1): `describeGroupRecovered` waits.
   */
  describeGroup(group: string): GroupDescription {
    this.#checkCoordinator(group);
    const g = this.#groups.get(group);
    if (g === undefined && !this.#offsets.hasGroup(group)) throw unknownGroup(group);
    return describe(group, g, this.#offsets, this.#host);
  }

  /** `describeGroup` once the partitions of the group's topics are recovered (Broker.recovered). */
  async describeGroupRecovered(group: string): Promise<GroupDescription> {
    this.#checkCoordinator(group);
    const topics = groupTopics(group, this.#groups.get(group), this.#offsets);
    await Promise.all(topics.map((t) => this.#host.recovered(t).catch(ignoreUnknownTopic)));
    return this.describeGroup(group);
  }

  /** Stops the sweep and answers every waiting join with SHUTTING_DOWN. Later calls fail with it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweep !== null) clearInterval(this.#sweep);
    const err = shuttingDown();
    for (const g of this.#groups.values()) {
      if (g instanceof KafkaGroup) g.abortWaits(err);
      else g.abortJoins(err);
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  #checkOpen(): void {
    if (this.#closed) throw shuttingDown();
  }

  /** Open, a valid name, and (in cluster mode) a group of an offsets partition this broker leads and has loaded. */
  #checkCoordinator(group: string): void {
    this.#checkOpen();
    checkGroupName(group);
    this.#leadership?.check(group);
  }

  /** Forgets the groups `which` picks; members waiting in a join or sync are told NOT_COORDINATOR. */
  #dropGroups(which: (group: string) => boolean): void {
    for (const [name, g] of this.#groups) {
      if (!which(name)) continue;
      this.#groups.delete(name);
      const err = new ConchError(
        ErrorCode.NOT_COORDINATOR,
        `this broker no longer coordinates group "${name}": find its coordinator again`,
      );
      if (g instanceof KafkaGroup) g.abortWaits(err);
      else g.abortJoins(err);
    }
  }

  #native(group: string, memberId: string): ConsumerGroup {
    const g = this.#groups.get(group);
    if (g === undefined) throw unknownMember(group, memberId);
    if (g instanceof KafkaGroup) throw otherKind(group, "kafka");
    return g;
  }

  #kafka(group: string, memberId: string): KafkaGroup {
    const g = this.#groups.get(group);
    if (g === undefined) throw unknownMember(group, memberId);
    if (g instanceof ConsumerGroup) throw otherKind(group, "native");
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

  /** UNKNOWN_TOPIC or UNKNOWN_PARTITION unless it exists (in the cluster, in cluster mode). */
  #checkPartition(topic: string, partition: number): void {
    const inCluster = this.#host.cluster?.partitions(topic);
    if (inCluster === undefined) {
      this.#host.checkPartition(topic, partition);
      return;
    }
    if (!Number.isInteger(partition) || partition < 0 || partition >= inCluster.length) {
      throw new ConchError(
        ErrorCode.UNKNOWN_PARTITION,
        `topic "${topic}" has ${inCluster.length} partition(s); there is no partition ${partition}`,
      );
    }
  }

  #partitionCount(topic: string): number {
    const inCluster = this.#host.cluster?.partitions(topic);
    if (inCluster !== undefined) return inCluster.length;
    try {
      return this.#host.topicInfo(topic).partitions;
    } catch {
      return 0;
    }
  }
}

/** A group's topic deleted meanwhile: its description shows what was committed, as before. */
function ignoreUnknownTopic(err: unknown): void {
  if (err instanceof ConchError && err.code === ErrorCode.UNKNOWN_TOPIC) return;
  throw err;
}

function copy(bytes: Uint8Array): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes);
}

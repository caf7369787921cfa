/**
 * A consumer in a consumer group (docs/groups.md): the group's members share the partitions of its
 * topics, each partition read by exactly one member, and the group remembers where it got to.
 *
 *   const consumer = conch.consumer({ group: "billing", topics: ["orders"] });
 *   for await (const m of consumer) handle(m);
 *
 * It joins in the background as soon as it is made, heartbeats, and on every rebalance commits what
 * it has processed (with `autoCommit`), rejoins and hands its new partitions to an ordinary
 * Consumer, which fetches them as their owner. A partition new to this member starts at the offset
 * the group committed for it, or, with none, where `resetPolicy` says; a committed offset that
 * retention has since deleted starts at the earliest offset still stored ("offsetReset" event).
 *
 * Delivery is at-least-once. A message counts as processed once the iterator moves past it (the
 * application asks for the next one); commits store, per partition, the offset after the last
 * processed message. The message in hand when a loop exits (`break`, or a throw) is not processed:
 * pass it to `commit(message)` to count it. Whatever a member processed but did not commit is read
 * again by the partition's next owner.
 *
 * Events (typed: GroupConsumerEvents): "revoked" and "assigned" (the partitions this member stops
 * and starts reading), "rebalance" ({ generation, memberId, partitions }), "offsetReset" ({ topic,
 * partition, committed, offset }), "commitFailed" (the ConchError of a failed automatic commit).
 */
import { EventEmitter } from "node:events";
import { ConchError, ErrorCode } from "../format/errors.js";
import { OffsetSpec } from "../protocol/api.js";
import { decodeCommitOffsetsResponse, encodeCommitOffsetsRequest } from "../protocol/commit-offsets.js";
import { decodeFetchOffsetsResponse, encodeFetchOffsetsRequest } from "../protocol/fetch-offsets.js";
import type { JoinGroupResponse } from "../protocol/join-group.js";
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from "../protocol/list-offsets.js";
import { abortable } from "./abort.js";
import { ConnectionManager } from "./connection-manager.js";
import {
  Consumer,
  type ConsumerBatch,
  type ConsumerMessage,
  type IterateOptions,
  type PartitionAssignment,
  type TopicPartition,
  type WaitOptions,
} from "./consumer.js";
import { CoordinatorLink } from "./coordinator-link.js";
import { asConchError } from "./errors.js";
import {
  type GroupConsumerEvents,
  type GroupConsumerOptions,
  groupSettings,
  type OffsetResetEvent,
  type RebalanceEvent,
} from "./group-consumer-options.js";
import { GroupMembership, isFatalGroupError } from "./group-membership.js";
import { GroupMessageIterator, type HeldMessages } from "./group-message-iterator.js";
import { GroupPositions } from "./group-positions.js";
import { type ClientOptions, connectionManagerOptions } from "./options.js";

export type {
  GroupConsumerEvents,
  GroupConsumerOptions,
  OffsetResetEvent,
  RebalanceEvent,
} from "./group-consumer-options.js";
export type { GroupStrategy } from "./group-membership.js";

/** A partition new to the member, where it starts, and what the group had committed (-1: none). */
interface StartingPartition extends PartitionAssignment {
  committed: number;
}

export class GroupConsumer
  extends EventEmitter<GroupConsumerEvents>
  implements AsyncIterable<ConsumerMessage>
{
  #consumer: Consumer;
  #manager: ConnectionManager;
  /** Group requests: to the group's coordinator. */
  #coordinator: CoordinatorLink;
  #membership: GroupMembership;
  #group: string;
  #autoCommit: boolean;
  #resetPolicy: "earliest" | "latest";
  #sessionTimeoutMs: number;
  #stop = new AbortController();
  #loop: Promise<void>;
  #autoCommitTimer: NodeJS.Timeout | null = null;
  /** What was processed and committed, for the partitions owned now. */
  #positions = new GroupPositions();
  /** The generation the owned partitions belong to; -1 when there is no assignment to go on from. */
  #ownedGeneration = -1;
  /** The generation whose assignment the consumer reads now; 0 before the first. */
  #assignedGeneration = 0;
  /** What the message iterators report to. */
  #held: HeldMessages;
  #commitTail: Promise<unknown> = Promise.resolve();
  #committing = false;
  #fatal: ConchError | null = null;
  #ready: Promise<void>;
  #resolveReady!: () => void;
  #rejectReady!: (err: ConchError) => void;
  #closing: Promise<void> | null = null;

  constructor(client: ClientOptions, options: GroupConsumerOptions) {
    super();
    const settings = groupSettings(client, options);
    this.#group = settings.membership.group;
    this.#sessionTimeoutMs = settings.membership.sessionTimeoutMs;
    this.#autoCommit = settings.autoCommit;
    this.#resetPolicy = settings.resetPolicy;
    // Group requests go on their own connection: a join that waits out a rebalance, or a commit
    // waiting for its fsync, never sits in front of a fetch.
    const connection = connectionManagerOptions(client);
    this.#manager = new ConnectionManager(connection);
    this.#coordinator = new CoordinatorLink(this.#manager, connection, this.#group);
    this.#membership = new GroupMembership(this.#coordinator, settings.membership);
    this.#consumer = new Consumer(client, {
      ...settings.fetch,
      // Past the end of the log (a broker that lost an unflushed tail) the fetcher goes to the end;
      // below its start (retention), to the start. Where to begin without a commit is decided here.
      resetPolicy: "earliest",
      member: this.#membership.member,
    });
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.#ready.catch(() => {});
    const positions = this.#positions;
    const self = this;
    this.#held = {
      hold: (m) => positions.hold(m),
      release: () => positions.release(),
      get failure() {
        return self.#fatal;
      },
    };
    const signal = options.signal;
    if (signal !== undefined) {
      if (signal.aborted) void this.close();
      else signal.addEventListener("abort", () => void this.close(), { once: true });
    }
    this.#loop = this.#run();
    if (this.#autoCommit) {
      this.#autoCommitTimer = setInterval(() => this.#commitInBackground(), settings.autoCommitIntervalMs);
      this.#autoCommitTimer.unref();
    }
  }

  get group(): string {
    return this.#group;
  }

  /** The id the broker gave this member; "" until it has joined. */
  get memberId(): string {
    return this.#membership.member.memberId;
  }

  /** The generation of the assignment being read; 0 until the first one is in place. */
  get generation(): number {
    return this.#assignedGeneration;
  }

  get closed(): boolean {
    return this.#closing !== null;
  }

  /** The partitions this member owns now. */
  assignment(): TopicPartition[] {
    return this.#consumer.assignment();
  }

  /**
   * Resolves once the first assignment is in place (rejects if the consumer fails or closes first).
   * Aborting `signal` ends the wait with ABORTED; the consumer goes on joining.
   */
  ready(options: WaitOptions = {}): Promise<void> {
    return abortable(this.#ready, options.signal, "ready");
  }

  /** Messages one by one, as `for await (const m of consumer)`. */
  messages(options: IterateOptions = {}): AsyncIterableIterator<ConsumerMessage> {
    return new GroupMessageIterator(this.#consumer.messages(options), this.#held);
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumerMessage> {
    return this.messages();
  }

  /** Fetched batches; a batch counts as processed when the next one is asked for. */
  batches(options: IterateOptions = {}): AsyncIterableIterator<ConsumerBatch> {
    return this.#consumer.batches(options);
  }

  /** Resolves once the first assignment is in place and every partition's start is known. */
  start(options: WaitOptions = {}): Promise<void> {
    const started = this.#ready.then(() => this.#consumer.start());
    return abortable(started, options.signal, "start");
  }

  /**
   * Stops fetching these owned partitions until `resume`; what was fetched for them is kept for
   * after. A pause lasts while the member owns the partition: one that moves away and comes back
   * is read again unpaused. INVALID_REQUEST for a partition not owned now.
   */
  pause(partitions: readonly TopicPartition[]): void {
    this.#consumer.pause(partitions);
  }

  /** Fetches paused partitions again; partitions not paused (or not owned) are ignored. */
  resume(partitions: readonly TopicPartition[]): void {
    this.#consumer.resume(partitions);
  }

  /** The owned partitions that are paused. */
  paused(): TopicPartition[] {
    return this.#consumer.paused();
  }

  /**
   * Moves an owned partition: its next message comes from `offset`, and the next commit stores
   * `offset` (before or after what was committed) until messages from there are processed.
   * INVALID_REQUEST for a partition not owned now.
   */
  seek(topic: string, partition: number, offset: number): void {
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new ConchError(ErrorCode.INVALID_REQUEST, `offset must be a non-negative integer, not ${offset}`);
    }
    this.#consumer.seek(topic, partition, { offset });
    this.#positions.seeked(topic, partition);
  }

  /**
   * Counts a record, and everything before it in its partition, as processed: for the message in
   * hand, or a record read from a batch that is not finished (the batch API counts a batch only when
   * the next one is asked for).
   */
  markProcessed(record: TopicPartition & { offset: number }): void {
    this.#positions.markProcessed(record);
  }

  /**
   * Commits what was processed, per owned partition. `record` (the one just handled) counts as
   * processed too (see markProcessed). Rejects with ILLEGAL_GENERATION or UNKNOWN_MEMBER when the
   * partitions have moved on: the new owner will read the uncommitted messages again. Aborting
   * `signal` rejects with ABORTED; a commit request already sent may still be applied.
   */
  commit(record?: TopicPartition & { offset: number }, options: WaitOptions = {}): Promise<void> {
    if (record !== undefined) this.markProcessed(record);
    const signal = options.signal;
    return abortable(this.#commit(signal), signal, "commit");
  }

  /**
   * Stops fetching, commits what was processed (with `autoCommit`), leaves the group so that its
   * partitions move at once, and closes the connections.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#autoCommitTimer !== null) clearInterval(this.#autoCommitTimer);
      this.#stop.abort();
      await this.#loop;
      await this.#consumer.close();
      if (this.#autoCommit && this.#fatal === null) {
        // Bounded: past a session the broker has dropped the member and would refuse it anyway.
        await this.#commit(AbortSignal.timeout(this.#sessionTimeoutMs)).catch((err: unknown) =>
          this.emit("commitFailed", asConchError(err)),
        );
      }
      await this.#membership.leave();
      this.#coordinator.close();
      this.#manager.close();
      this.#rejectReady(new ConchError(ErrorCode.ABORTED, "the consumer closed"));
    })();
    return this.#closing;
  }

  // ---- the membership loop -------------------------------------------------------------------

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    try {
      for (;;) {
        const joined = await this.#membership.join(signal);
        try {
          await this.#apply(joined);
        } catch (err) {
          const e = asConchError(err);
          if (signal.aborted) return;
          if (isFatalGroupError(e)) throw e;
          // Offsets could not be read: start over from a clean slate.
          this.#drop();
          continue;
        }
        const reason = await this.#membership.heartbeatUntilRejoin(signal);
        if (reason === "rebalance") {
          // The generation holds until the rebalance completes: save what was processed first.
          if (this.#autoCommit) {
            await this.commit().catch((err: unknown) => this.emit("commitFailed", asConchError(err)));
          }
        } else {
          // The partitions may have had other owners since: forget every position.
          this.#drop();
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      this.#fail(asConchError(err));
    }
  }

  /** Takes a new assignment: kept partitions go on where they are, new ones resume from the commits. */
  async #apply(joined: JoinGroupResponse): Promise<void> {
    const generation = joined.generation;
    // Positions carry over only from the generation just before (or the same one, after a rejoin
    // that changed nothing): with a gap, another member may have owned a partition in between.
    const continuous =
      this.#ownedGeneration >= 0 &&
      (generation === this.#ownedGeneration || generation === this.#ownedGeneration + 1);
    const next: TopicPartition[] = [];
    for (const t of joined.assignment)
      for (const p of t.partitions) next.push({ topic: t.topic, partition: p });
    const positions = this.#positions;
    const kept = continuous ? next.filter((p) => positions.owns(p.topic, p.partition)) : [];
    const fresh = continuous ? next.filter((p) => !positions.owns(p.topic, p.partition)) : next;
    positions.ownOnly(kept);
    this.#ownedGeneration = generation;
    this.#membership.member.generation = generation;
    if (this.#closing !== null) return;
    // Stop the partitions that moved away now; fetch the rest while the offsets are looked up.
    this.#revoke(kept);
    this.#consumer.assign(kept);
    const starts = await this.#startPositions(fresh);
    if (this.#stop.signal.aborted) return;
    this.#consumer.assign([...kept, ...starts]);
    positions.own(fresh);
    for (const s of starts) if (s.committed >= 0) positions.committed(s.topic, s.partition, s.committed);
    this.#assignedGeneration = generation;
    if (fresh.length > 0) this.emit("assigned", fresh);
    this.emit("rebalance", {
      generation,
      memberId: joined.memberId,
      partitions: next,
    } satisfies RebalanceEvent);
    this.#resolveReady();
  }

  /** Where each new partition starts: after the committed offset, else per the reset policy. */
  async #startPositions(partitions: readonly TopicPartition[]): Promise<StartingPartition[]> {
    if (partitions.length === 0) return [];
    const signal = this.#stop.signal;
    const res = await this.#coordinator.request(
      encodeFetchOffsetsRequest,
      { group: this.#group, partitions: partitions.map((p) => ({ topic: p.topic, partition: p.partition })) },
      decodeFetchOffsetsResponse,
      { signal },
    );
    // One lookup per partition, made now, so that a member starts where the log is when it gets the
    // partition: the reset policy's end for a partition without a commit, else the log start, which a
    // commit that retention has since deleted falls below.
    return Promise.all(
      res.offsets.map(async (o): Promise<StartingPartition> => {
        const committed = o.offset;
        const spec =
          committed < 0 && this.#resetPolicy === "latest" ? OffsetSpec.LATEST : OffsetSpec.EARLIEST;
        const found = await this.#manager.request(
          encodeListOffsetsRequest,
          { topic: o.topic, partition: o.partition, spec, timestampMs: 0 },
          decodeListOffsetsResponse,
          { signal },
        );
        const start = committed < 0 || committed < found.offset ? found.offset : committed;
        const starting = { topic: o.topic, partition: o.partition, from: { offset: start }, committed };
        if (committed < 0 || committed >= found.offset) return starting;
        this.emit("offsetReset", {
          topic: o.topic,
          partition: o.partition,
          committed,
          offset: found.offset,
        } satisfies OffsetResetEvent);
        return starting;
      }),
    );
  }

  /** Forgets the assignment and every position: whatever comes next starts from the commits. */
  #drop(): void {
    this.#positions.clear();
    this.#ownedGeneration = -1;
    this.#assignedGeneration = 0;
    if (this.#closing === null) {
      this.#revoke([]);
      this.#consumer.assign([]);
    }
  }

  /** Tells the application which partitions it stops reading: those assigned now but not in `kept`. */
  #revoke(kept: readonly TopicPartition[]): void {
    const keep = new Set(kept.map((p) => `${p.topic}:${p.partition}`));
    const revoked = this.#consumer.assignment().filter((p) => !keep.has(`${p.topic}:${p.partition}`));
    if (revoked.length > 0) this.emit("revoked", revoked);
  }

  #fail(err: ConchError): void {
    this.#fatal = err;
    this.#rejectReady(err);
    // Iterators end; they throw `err` (GroupMessageIterator) instead of finishing quietly.
    void this.#consumer.close();
  }

  // ---- commits -------------------------------------------------------------------------------

  /** Commits one after another, so that the broker sees them in the order they were made. */
  #commit(signal: AbortSignal | undefined): Promise<void> {
    const run = this.#commitTail.then(() => this.#commitNow(signal));
    this.#commitTail = run.catch(() => {});
    return run;
  }

  #commitInBackground(): void {
    if (this.#committing || this.#closing !== null) return;
    this.commit().catch((err: unknown) => this.emit("commitFailed", asConchError(err)));
  }

  async #commitNow(signal: AbortSignal | undefined): Promise<void> {
    const member = this.#membership.member;
    const offsets = this.#positions.toCommit(this.#consumer.positions());
    if (offsets.length === 0 || member.generation === 0 || member.memberId === "") return;
    this.#committing = true;
    try {
      await this.#coordinator.request(
        encodeCommitOffsetsRequest,
        { group: this.#group, memberId: member.memberId, generation: member.generation, offsets },
        decodeCommitOffsetsResponse,
        { signal },
      );
      for (const o of offsets) this.#positions.committed(o.topic, o.partition, o.offset);
    } finally {
      this.#committing = false;
    }
  }
}

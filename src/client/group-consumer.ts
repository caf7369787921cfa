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
 * Events: "rebalance" ({ generation, memberId, partitions }), "offsetReset" ({ topic, partition,
 * committed, offset }), "commitFailed" (the ConchError of a failed automatic commit).
 */
import { EventEmitter } from "node:events";
import { ConchError, ErrorCode } from "../format/errors.js";
import { OffsetSpec } from "../protocol/api.js";
import { decodeCommitOffsetsResponse, encodeCommitOffsetsRequest } from "../protocol/commit-offsets.js";
import { decodeFetchOffsetsResponse, encodeFetchOffsetsRequest } from "../protocol/fetch-offsets.js";
import type { JoinGroupResponse } from "../protocol/join-group.js";
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from "../protocol/list-offsets.js";
import { ConnectionManager } from "./connection-manager.js";
import {
  Consumer,
  type ConsumerBatch,
  type ConsumerMessage,
  type ConsumerOptions,
  type IterateOptions,
  type PartitionAssignment,
  type TopicPartition,
} from "./consumer.js";
import { asConchError } from "./errors.js";
import { GroupMembership, type GroupStrategy, groupStrategy, isFatalGroupError } from "./group-membership.js";
import { type ClientOptions, connectionManagerOptions, integerOption } from "./options.js";

export type { GroupStrategy } from "./group-membership.js";

export interface GroupConsumerOptions
  extends Omit<ConsumerOptions, "partitions" | "topics" | "from" | "resetPolicy" | "member"> {
  /** The group to join. */
  group: string;
  /** The topics the group's members share. */
  topics: readonly string[];
  /** How partitions are shared; the group uses the strategy most members ask for. Default "range". */
  strategy?: GroupStrategy;
  /** Commit processed positions every `autoCommitIntervalMs`, before a rebalance and at close. Default true. */
  autoCommit?: boolean;
  /** Default 5000. */
  autoCommitIntervalMs?: number;
  /** Where a partition starts when the group has committed nothing for it. Default "earliest". */
  resetPolicy?: "earliest" | "latest";
  /** The broker drops a member it has not heard from for this long. Default 10 000 (100..3 600 000). */
  sessionTimeoutMs?: number;
  /** How long a rebalance waits for the members to rejoin. Default `sessionTimeoutMs`. */
  rebalanceTimeoutMs?: number;
  /** Default a third of `sessionTimeoutMs`. */
  heartbeatIntervalMs?: number;
}

export interface RebalanceEvent {
  generation: number;
  memberId: string;
  /** This member's partitions in the new generation. */
  partitions: TopicPartition[];
}

export interface OffsetResetEvent {
  topic: string;
  partition: number;
  /** The committed offset, no longer in the log. */
  committed: number;
  /** Where the partition starts instead: the earliest offset still stored. */
  offset: number;
}

interface Committable {
  topic: string;
  partition: number;
  offset: number;
}

export class GroupConsumer extends EventEmitter implements AsyncIterable<ConsumerMessage> {
  #consumer: Consumer;
  #manager: ConnectionManager;
  #membership: GroupMembership;
  #group: string;
  #autoCommit: boolean;
  #resetPolicy: "earliest" | "latest";
  #sessionTimeoutMs: number;
  #stop = new AbortController();
  #loop: Promise<void>;
  #autoCommitTimer: NodeJS.Timeout | null = null;
  /** Partitions owned in the current generation ("topic:partition"), and the generation they belong to. */
  #owned = new Set<string>();
  #ownedGeneration = -1;
  /** The generation whose assignment the consumer reads now; 0 before the first. */
  #assignedGeneration = 0;
  /** What the group has committed for the owned partitions, as far as this member knows. */
  #committed = new Map<string, number>();
  /** The message the application holds: handed out, not yet processed. */
  #held: ConsumerMessage | null = null;
  /** Positions the application vouched for with markProcessed, ahead of what the iterators know. */
  #marks = new Map<string, number>();
  #commitTail: Promise<unknown> = Promise.resolve();
  #committing = false;
  #fatal: ConchError | null = null;
  #ready: Promise<void>;
  #resolveReady!: () => void;
  #rejectReady!: (err: ConchError) => void;
  #closing: Promise<void> | null = null;

  constructor(client: ClientOptions, options: GroupConsumerOptions) {
    super();
    if (typeof options.group !== "string" || options.group === "") {
      throw new ConchError(ErrorCode.INVALID_GROUP, "a group consumer needs a group name");
    }
    if (options.topics.length === 0) {
      throw new ConchError(ErrorCode.INVALID_REQUEST, "a group consumer needs at least one topic");
    }
    const conn = connectionManagerOptions(client);
    const sessionTimeoutMs = integerOption(
      "sessionTimeoutMs",
      options.sessionTimeoutMs,
      10_000,
      100,
      3_600_000,
    );
    const membership = {
      group: options.group,
      clientId: conn.clientId,
      topics: [...options.topics],
      strategy: groupStrategy(options.strategy),
      sessionTimeoutMs,
      rebalanceTimeoutMs: integerOption(
        "rebalanceTimeoutMs",
        options.rebalanceTimeoutMs,
        sessionTimeoutMs,
        100,
        3_600_000,
      ),
      heartbeatIntervalMs: integerOption(
        "heartbeatIntervalMs",
        options.heartbeatIntervalMs,
        Math.max(1, Math.floor(sessionTimeoutMs / 3)),
        1,
        sessionTimeoutMs,
      ),
      retryBackoffMs: integerOption("retryBackoffMs", options.retryBackoffMs, 100, 1),
      retryBackoffMaxMs: integerOption("retryBackoffMaxMs", options.retryBackoffMaxMs, 2000, 1),
    };
    const autoCommitIntervalMs = integerOption("autoCommitIntervalMs", options.autoCommitIntervalMs, 5000, 1);
    this.#group = options.group;
    this.#sessionTimeoutMs = sessionTimeoutMs;
    this.#autoCommit = options.autoCommit ?? true;
    this.#resetPolicy = options.resetPolicy ?? "earliest";
    if (this.#resetPolicy !== "earliest" && this.#resetPolicy !== "latest") {
      throw new ConchError(ErrorCode.INVALID_REQUEST, `resetPolicy must be "earliest" or "latest"`);
    }
    // Group requests go on their own connection: a join that waits out a rebalance, or a commit
    // waiting for its fsync, never sits in front of a fetch.
    this.#manager = new ConnectionManager(conn);
    this.#membership = new GroupMembership(this.#manager, membership);
    const { group: _g, strategy: _s, autoCommit: _a, autoCommitIntervalMs: _i, signal, ...rest } = options;
    this.#consumer = new Consumer(client, {
      ...stripGroupOptions(rest),
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
    if (signal !== undefined) {
      if (signal.aborted) void this.close();
      else signal.addEventListener("abort", () => void this.close(), { once: true });
    }
    this.#loop = this.#run();
    if (this.#autoCommit) {
      this.#autoCommitTimer = setInterval(() => this.#commitInBackground(), autoCommitIntervalMs);
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

  /** Resolves once the first assignment is in place (rejects if the consumer fails or closes first). */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Messages one by one, as `for await (const m of consumer)`. */
  messages(options: IterateOptions = {}): AsyncIterableIterator<ConsumerMessage> {
    return new GroupMessageIterator(this.#consumer.messages(options), this);
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumerMessage> {
    return this.messages();
  }

  /** Fetched batches; a batch counts as processed when the next one is asked for. */
  batches(options: IterateOptions = {}): AsyncIterableIterator<ConsumerBatch> {
    return this.#consumer.batches(options);
  }

  /** Resolves once the first assignment is in place and every partition's start is known. */
  async start(): Promise<void> {
    await this.#ready;
    await this.#consumer.start();
  }

  /**
   * Counts a record, and everything before it in its partition, as processed: for the message in
   * hand, or a record read from a batch that is not finished (the batch API counts a batch only when
   * the next one is asked for).
   */
  markProcessed(record: TopicPartition & { offset: number }): void {
    if (record === this.#held) this.#held = null;
    const k = key(record.topic, record.partition);
    if (!this.#owned.has(k)) return;
    this.#marks.set(k, Math.max(this.#marks.get(k) ?? 0, record.offset + 1));
  }

  /**
   * Commits what was processed, per owned partition. `record` (the one just handled) counts as
   * processed too (see markProcessed). Rejects with ILLEGAL_GENERATION or UNKNOWN_MEMBER when the
   * partitions have moved on: the new owner will read the uncommitted messages again.
   */
  commit(record?: TopicPartition & { offset: number }): Promise<void> {
    if (record !== undefined) this.markProcessed(record);
    return this.#commit(undefined);
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
      this.#manager.close();
      this.#rejectReady(new ConchError(ErrorCode.ABORTED, "the consumer closed"));
    })();
    return this.#closing;
  }

  /** @internal The iterator handed out `m`. */
  hold(m: ConsumerMessage): void {
    this.#held = m;
  }

  /** @internal The iterator moved past the held message: it is processed. */
  release(): void {
    this.#held = null;
  }

  /** @internal The error that ended the group loop, if any. */
  get fatal(): ConchError | null {
    return this.#fatal;
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
    const kept = continuous ? next.filter((p) => this.#owned.has(key(p.topic, p.partition))) : [];
    const fresh = continuous ? next.filter((p) => !this.#owned.has(key(p.topic, p.partition))) : next;
    this.#owned = new Set(kept.map((p) => key(p.topic, p.partition)));
    this.#ownedGeneration = generation;
    this.#membership.member.generation = generation;
    for (const k of [...this.#committed.keys()]) if (!this.#owned.has(k)) this.#committed.delete(k);
    for (const k of [...this.#marks.keys()]) if (!this.#owned.has(k)) this.#marks.delete(k);
    if (this.#closing !== null) return;
    // Stop the partitions that moved away now; fetch the rest while the offsets are looked up.
    this.#consumer.assign(kept);
    const starts = await this.#startPositions(fresh);
    if (this.#stop.signal.aborted) return;
    this.#consumer.assign([...kept, ...starts]);
    for (const p of fresh) this.#owned.add(key(p.topic, p.partition));
    this.#assignedGeneration = generation;
    this.emit("rebalance", {
      generation,
      memberId: joined.memberId,
      partitions: next,
    } satisfies RebalanceEvent);
    this.#resolveReady();
  }

  /** Where each new partition starts: after the committed offset, else per the reset policy. */
  async #startPositions(partitions: readonly TopicPartition[]): Promise<PartitionAssignment[]> {
    if (partitions.length === 0) return [];
    const signal = this.#stop.signal;
    const res = await this.#manager.request(
      encodeFetchOffsetsRequest,
      { group: this.#group, partitions: partitions.map((p) => ({ topic: p.topic, partition: p.partition })) },
      decodeFetchOffsetsResponse,
      { signal },
    );
    // One lookup per partition, made now, so that a member starts where the log is when it gets the
    // partition: the reset policy's end for a partition without a commit, else the log start, which a
    // commit that retention has since deleted falls below.
    return Promise.all(
      res.offsets.map(async (o): Promise<PartitionAssignment> => {
        const committed = o.offset;
        const spec =
          committed < 0 && this.#resetPolicy === "latest" ? OffsetSpec.LATEST : OffsetSpec.EARLIEST;
        const found = await this.#manager.request(
          encodeListOffsetsRequest,
          { topic: o.topic, partition: o.partition, spec, timestampMs: 0 },
          decodeListOffsetsResponse,
          { signal },
        );
        if (committed < 0) return { topic: o.topic, partition: o.partition, from: { offset: found.offset } };
        this.#committed.set(key(o.topic, o.partition), committed);
        if (committed >= found.offset)
          return { topic: o.topic, partition: o.partition, from: { offset: committed } };
        this.emit("offsetReset", {
          topic: o.topic,
          partition: o.partition,
          committed,
          offset: found.offset,
        } satisfies OffsetResetEvent);
        return { topic: o.topic, partition: o.partition, from: { offset: found.offset } };
      }),
    );
  }

  /** Forgets the assignment and every position: whatever comes next starts from the commits. */
  #drop(): void {
    this.#owned.clear();
    this.#ownedGeneration = -1;
    this.#assignedGeneration = 0;
    this.#committed.clear();
    this.#marks.clear();
    if (this.#closing === null) this.#consumer.assign([]);
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
    const offsets = this.#processed();
    if (offsets.length === 0 || member.generation === 0 || member.memberId === "") return;
    this.#committing = true;
    try {
      await this.#manager.request(
        encodeCommitOffsetsRequest,
        { group: this.#group, memberId: member.memberId, generation: member.generation, offsets },
        decodeCommitOffsetsResponse,
        { signal },
      );
      for (const o of offsets) {
        const k = key(o.topic, o.partition);
        if (this.#owned.has(k)) this.#committed.set(k, o.offset);
      }
    } finally {
      this.#committing = false;
    }
  }

  /** The processed position of every owned partition whose position moved since its last commit. */
  #processed(): Committable[] {
    const out: Committable[] = [];
    const held = this.#held;
    for (const p of this.#consumer.positions()) {
      const k = key(p.topic, p.partition);
      if (!this.#owned.has(k)) continue;
      let offset = p.offset;
      // The iterator counted the message in hand as read; it is not processed until it moves on.
      if (held !== null && held.topic === p.topic && held.partition === p.partition) {
        offset = Math.min(offset, held.offset);
      }
      offset = Math.max(offset, this.#marks.get(k) ?? 0);
      if (this.#committed.get(k) === offset) continue;
      out.push({ topic: p.topic, partition: p.partition, offset });
    }
    return out;
  }
}

/**
 * The Consumer's message iterator, telling the group consumer which message the application holds:
 * it is processed once the application asks for the next.
 */
class GroupMessageIterator implements AsyncIterableIterator<ConsumerMessage> {
  #inner: AsyncIterableIterator<ConsumerMessage>;
  #owner: GroupConsumer;

  constructor(inner: AsyncIterableIterator<ConsumerMessage>, owner: GroupConsumer) {
    this.#inner = inner;
    this.#owner = owner;
  }

  next(): Promise<IteratorResult<ConsumerMessage>> {
    this.#owner.release();
    return this.#inner.next().then(this.#took);
  }

  return(): Promise<IteratorResult<ConsumerMessage>> {
    return this.#inner.return?.() ?? Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #took = (r: IteratorResult<ConsumerMessage>): IteratorResult<ConsumerMessage> => {
    if (!r.done) this.#owner.hold(r.value);
    else if (this.#owner.fatal !== null) throw this.#owner.fatal;
    return r;
  };
}

/** The Consumer options a group consumer passes on (fetch sizes, waits, backoff). */
function stripGroupOptions(
  o: Omit<GroupConsumerOptions, "group" | "strategy" | "autoCommit" | "autoCommitIntervalMs" | "signal">,
): ConsumerOptions {
  const {
    topics: _t,
    resetPolicy: _r,
    sessionTimeoutMs: _s,
    rebalanceTimeoutMs: _b,
    heartbeatIntervalMs: _h,
    ...fetch
  } = o;
  return fetch;
}

function key(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}

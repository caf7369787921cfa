/**
 * The consumer: reads an assigned set of (topic, partition) from chosen positions, as messages
 * (`for await (const m of consumer)`) or as fetched batches (`consumer.batches()`, a cursor per
 * batch and no object per record).
 *
 * The assignment is a plain settable set (`assign`): partitions that stay keep their position, new
 * ones start where asked, dropped ones stop. A consumer group coordinator drives a consumer through
 * `assign` on every rebalance and reads `positions()` to commit; nothing here needs to change for it.
 *
 * Positions: a message's partition moves past it when the iterator hands it out (a loop that ends
 * part-way through a batch puts the rest back for the next one); a batch's partition
 * moves to `batch.nextOffset` when the application asks for the batch after it (or calls
 * `commitBatch`), so `positions()` never runs ahead of what the application has handled.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { abortable, eitherSignal } from "./abort.js";
import { BatchQueue } from "./batch-queue.js";
import { BrokerPool } from "./broker-pool.js";
import { ConnectionManager } from "./connection-manager.js";
import { BatchCursor, type ConsumerBatch } from "./consumer-batch.js";
import { type ConsumerMessage, FetchedMessage } from "./consumer-message.js";
import { describeTopicNewest } from "./describe-topic-versions.js";
import { abortedError } from "./errors.js";
import { type ClientOptions, connectionManagerOptions, durationOption, integerOption } from "./options.js";
import {
  type FetchMember,
  type FetchSettings,
  PartitionFetcher,
  type ResetPolicy,
  type StartPosition,
} from "./partition-fetcher.js";

export type { ConsumerBatch } from "./consumer-batch.js";
export type { ConsumerMessage, RecordHeader } from "./consumer-message.js";
export { CorruptBatchError } from "./corrupt-batch-error.js";
export type { ResetPolicy, StartPosition } from "./partition-fetcher.js";

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface PartitionAssignment extends TopicPartition {
  /** Where to start; default the consumer's `from`. Ignored for a partition already assigned. */
  from?: StartPosition | undefined;
}

export interface ConsumerOptions {
  /** Partitions to read. */
  partitions?: readonly PartitionAssignment[];
  /** Topics to read whole: every partition of each, learned with DescribeTopic at the start. */
  topics?: readonly string[];
  /** Default start for partitions that do not say. Default "earliest". */
  from?: StartPosition;
  /** Position outside the log (see ResetPolicy). Default "earliest". */
  resetPolicy?: ResetPolicy;
  /**
   * Long poll: the broker waits this long for `minBytes` of data before it sends what it has, and
   * a stream with nothing to send answers empty this often, to show it is alive. Default 500 ms
   * (at least 1 ms for a stream).
   */
  maxWaitMs?: number;
  /** Bytes per fetch (at least one whole batch is always returned). Default 1 MiB. */
  maxBytes?: number;
  /** The broker answers a fetch once this much data is there. Default 1. */
  minBytes?: number;
  /**
   * Bytes the broker may push ahead of what the application has taken, shared by the assigned
   * partitions: each partition's stream may run ahead by an equal share of it, at least two
   * fetches' worth (2 x maxBytes) and at most eight. A consumer of few partitions reading old
   * data then keeps the broker's reads going while it works through what came before. Default
   * 32 MiB.
   */
  maxPrefetchBytes?: number;
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /**
   * Check each fetched batch's CRC32C before handing its records on (as librdkafka's `check.crcs`);
   * a mismatch stops the partition with a CorruptBatchError (CORRUPT_BATCH). Default true.
   */
  checkCrcs?: boolean;
  /** Aborting it closes the consumer; a waiting iterator throws ABORTED. */
  signal?: AbortSignal;
  /** Fetch as this group member (GroupConsumer sets it; read at every fetch, so a new generation applies at once). */
  member?: FetchMember;
}

export interface IterateOptions {
  /** Ends a wait for data with ABORTED (the consumer stays open). */
  signal?: AbortSignal | undefined;
}

/** For calls that wait (`start`, and a group consumer's `ready` and `commit`). */
export interface WaitOptions {
  /** Ends the wait with ABORTED; the consumer stays open and what was started goes on. */
  signal?: AbortSignal | undefined;
}

export interface PartitionPosition extends TopicPartition {
  /** The next offset the application will see. */
  offset: number;
}

export class Consumer implements AsyncIterable<ConsumerMessage> {
  #manager: ConnectionManager;
  /** Fetches go to each partition's leader; the bootstrap connection is #manager. */
  #pool: BrokerPool;
  #settings: FetchSettings;
  #prefetchBytes: number;
  #defaultStart: StartPosition;
  #fetchers = new Map<string, PartitionFetcher>();
  #queue = new BatchQueue();
  #signal: AbortSignal | undefined;
  #pendingTopics: readonly string[];
  #started = false;
  #topicsLoaded: Promise<void> | null = null;
  #closed: Promise<void> | null = null;

  constructor(client: ClientOptions, options: ConsumerOptions = {}) {
    const connOptions = connectionManagerOptions(client);
    this.#manager = new ConnectionManager(connOptions);
    this.#pool = new BrokerPool(this.#manager, connOptions);
    this.#settings = {
      member: options.member,
      maxWaitMs: durationOption("maxWaitMs", options.maxWaitMs, 500, 0),
      maxBytes: integerOption("maxBytes", options.maxBytes, 1 << 20, 1, 0xffffffff),
      minBytes: integerOption("minBytes", options.minBytes, 1, 0, 0xffffffff),
      resetPolicy: options.resetPolicy ?? "earliest",
      retryBackoffMs: durationOption("retryBackoffMs", options.retryBackoffMs, 100, 1),
      retryBackoffMaxMs: durationOption("retryBackoffMaxMs", options.retryBackoffMaxMs, 2000, 1),
      checkCrcs: options.checkCrcs ?? true,
      streamShareBytes: 0,
    };
    this.#prefetchBytes = integerOption(
      "maxPrefetchBytes",
      options.maxPrefetchBytes,
      32 << 20,
      1,
      2 ** 53 - 1,
    );
    this.#defaultStart = options.from ?? "earliest";
    this.#pendingTopics = options.topics ?? [];
    this.#signal = options.signal;
    if (this.#signal !== undefined) {
      if (this.#signal.aborted) this.#abort();
      else this.#signal.addEventListener("abort", this.#abort, { once: true });
    }
    if (options.partitions !== undefined) this.assign([...options.partitions]);
  }

  /**
   * Replaces the assignment. Partitions already assigned keep their position (and prefetched
   * data); new ones start at their `from`; the others stop and their unread batches are dropped.
   */
  assign(partitions: readonly PartitionAssignment[]): void {
    this.#checkOpen();
    const next = new Map<string, PartitionFetcher>();
    for (const p of partitions) {
      const id = key(p.topic, p.partition);
      if (next.has(id)) continue;
      let f = this.#fetchers.get(id);
      if (f === undefined || f.stopped) {
        f = new PartitionFetcher(
          p.topic,
          p.partition,
          p.from ?? this.#defaultStart,
          this.#pool,
          this.#settings,
          this.#queue,
        );
      }
      next.set(id, f);
    }
    for (const [id, f] of this.#fetchers) if (!next.has(id)) f.stop();
    this.#fetchers = next;
    // Streams opened from now on take their share; those open keep theirs until they reopen.
    this.#settings.streamShareBytes = Math.floor(this.#prefetchBytes / Math.max(1, next.size));
    if (this.#started) for (const f of next.values()) f.pump();
  }

  /** Whether close() was called (or the signal aborted). */
  get closed(): boolean {
    return this.#closed !== null;
  }

  /** The assigned partitions. */
  assignment(): TopicPartition[] {
    return [...this.#fetchers.values()].map((f) => ({ topic: f.topic, partition: f.partition }));
  }

  /** Moves an assigned partition; data already fetched for it is dropped. */
  seek(topic: string, partition: number, from: StartPosition): void {
    this.#checkOpen();
    this.#assigned(topic, partition).seek(from);
  }

  /**
   * Stops fetching these assigned partitions until `resume`; messages already fetched for them are
   * kept and come after the resume. A partition unassigned meanwhile forgets it was paused.
   */
  pause(partitions: readonly TopicPartition[]): void {
    this.#checkOpen();
    for (const f of partitions.map((p) => this.#assigned(p.topic, p.partition))) f.pause();
  }

  /** Fetches paused partitions again; what was kept for them comes first. Others are ignored. */
  resume(partitions: readonly TopicPartition[]): void {
    this.#checkOpen();
    for (const p of partitions) {
      const f = this.#fetchers.get(key(p.topic, p.partition));
      if (f === undefined || !f.paused) continue;
      f.resume();
      this.#queue.resumed(f);
    }
  }

  /** The paused partitions. */
  paused(): TopicPartition[] {
    const out: TopicPartition[] = [];
    for (const f of this.#fetchers.values())
      if (f.paused) out.push({ topic: f.topic, partition: f.partition });
    return out;
  }

  #assigned(topic: string, partition: number): PartitionFetcher {
    const f = this.#fetchers.get(key(topic, partition));
    if (f === undefined)
      throw new ConchError(ErrorCode.INVALID_REQUEST, `${topic}/${partition} is not assigned`);
    return f;
  }

  /** The next offset the application will see from a partition, or undefined before it is known. */
  position(topic: string, partition: number): number | undefined {
    const p = this.#fetchers.get(key(topic, partition))?.position;
    return p === undefined || p < 0 ? undefined : p;
  }

  /** Positions of every assigned partition whose position is known: what a group would commit. */
  positions(): PartitionPosition[] {
    const out: PartitionPosition[] = [];
    for (const f of this.#fetchers.values()) {
      if (f.position >= 0) out.push({ topic: f.topic, partition: f.partition, offset: f.position });
    }
    return out;
  }

  /** Marks a batch handled now rather than when the next one is asked for. */
  commitBatch(batch: ConsumerBatch): void {
    if (!batch.stale) batch.source.position = batch.nextOffset;
  }

  /** Fetched batches as they arrive, from all assigned partitions; `signal` ends a wait with ABORTED. */
  batches(options: IterateOptions = {}): AsyncIterableIterator<ConsumerBatch> {
    const signal = eitherSignal(options.signal, this.#signal);
    let current: ConsumerBatch | null = null;
    const got = (batch: ConsumerBatch | null): IteratorResult<ConsumerBatch> => {
      current = batch;
      return batch === null ? { done: true, value: undefined } : { done: false, value: batch };
    };
    const take = (): Promise<IteratorResult<ConsumerBatch>> => this.#queue.wait(signal).then(got);
    // Not async: once started, a batch costs the queue's promise and one `then`.
    const next = (): Promise<IteratorResult<ConsumerBatch>> => {
      if (current !== null) this.commitBatch(current);
      current = null;
      return this.#started ? take() : this.#start().then(take);
    };
    const iterator: AsyncIterableIterator<ConsumerBatch> = {
      next,
      return: async () => {
        if (current !== null) this.commitBatch(current);
        current = null;
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /**
   * Messages one by one. Breaking out of the loop leaves the consumer open (call `close()`), and the
   * next loop starts with the first message not handed out.
   */
  messages(options: IterateOptions = {}): AsyncIterableIterator<ConsumerMessage> {
    return new MessageIterator(this, this.#queue, eitherSignal(options.signal, this.#signal));
  }

  /** `for await (const m of consumer)`: the same as `messages()`. */
  [Symbol.asyncIterator](): AsyncIterator<ConsumerMessage> {
    return this.messages();
  }

  /** Stops fetching and closes the connection; iterators then finish. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#signal?.removeEventListener("abort", this.#abort);
      for (const f of this.#fetchers.values()) f.stop();
      this.#queue.end();
      this.#pool.close();
    })();
    return this.#closed;
  }

  /**
   * Starts fetching (iterating does it too) and resolves once every assigned partition knows its
   * start offset: with `from: "latest"`, whatever is produced after `start()` resolves is seen.
   */
  start(options: WaitOptions = {}): Promise<void> {
    return abortable(this.#startAndPosition(), options.signal, "start");
  }

  async #startAndPosition(): Promise<void> {
    await this.#start();
    await Promise.all([...this.#fetchers.values()].map((f) => f.whenPositioned()));
  }

  #start(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#topicsLoaded ??= (async () => {
      if (this.#pendingTopics.length > 0) {
        const add: PartitionAssignment[] = [];
        for (const topic of this.#pendingTopics) {
          // The newest version: it lists the partitions at once even while a restarted broker
          // recovers the topic's logs (each partition's position then waits for its own).
          const d = await describeTopicNewest(this.#manager, topic, { signal: this.#signal });
          for (const p of d.partitions) add.push({ topic, partition: p.partition });
        }
        this.#pendingTopics = [];
        const current = [...this.#fetchers.values()].map((f) => ({ topic: f.topic, partition: f.partition }));
        this.assign([...current, ...add]);
      }
      this.#started = true;
      for (const f of this.#fetchers.values()) f.pump();
    })();
    // A failed start (say, the broker was unreachable) is tried again by the next caller.
    this.#topicsLoaded.catch(() => {
      this.#topicsLoaded = null;
    });
    return this.#topicsLoaded;
  }

  #checkOpen(): void {
    if (this.#closed !== null) throw new ConchError(ErrorCode.ABORTED, "the consumer is closed");
  }

  #abort = (): void => {
    const err = abortedError(this.#signal, "consumer");
    for (const f of this.#fetchers.values()) f.stop();
    this.#queue.end(err);
    this.#closed ??= Promise.resolve().then(() => this.#pool.close());
  };
}

function key(topic: string, partition: number): string {
  // Topic names cannot hold ":" (protocol.md), so the key is unambiguous.
  return `${topic}:${partition}`;
}

/**
 * Hand-written rather than an async generator: when records are buffered, `next()` costs one
 * resolved promise, one result and the message, with no generator machinery in between.
 */
class MessageIterator implements AsyncIterableIterator<ConsumerMessage> {
  #consumer: Consumer;
  #queue: BatchQueue;
  #signal: AbortSignal | undefined;
  #cursor = new BatchCursor();
  #batch: ConsumerBatch | null = null;
  #started = false;

  constructor(consumer: Consumer, queue: BatchQueue, signal: AbortSignal | undefined) {
    this.#consumer = consumer;
    this.#queue = queue;
    this.#signal = signal;
  }

  next(): Promise<IteratorResult<ConsumerMessage>> {
    try {
      const m = this.#nextBuffered();
      if (m !== null) return Promise.resolve({ done: false, value: m });
      if (this.#started) {
        const batch = this.#queue.take();
        if (batch !== null) return this.#enter(batch);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#wait();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The loop ended (`break`, a throw): the batch in hand goes back to the queue from the first
   * message not handed out, so the next iteration starts there. Its partition has fetched past it
   * already; dropping it lost those messages, and a group then committed past them.
   */
  async return(): Promise<IteratorResult<ConsumerMessage>> {
    const batch = this.#batch;
    this.#batch = null;
    if (batch !== null) this.#putBack(batch);
    return { done: true, value: undefined };
  }

  /** What is left of `batch` goes back to the queue, from the first message not handed out. */
  #putBack(batch: ConsumerBatch): void {
    if (batch.stale) return;
    const rest = batch.rest(batch.source.position);
    if (rest !== null) this.#queue.putBack(rest);
  }

  async #wait(): Promise<IteratorResult<ConsumerMessage>> {
    if (!this.#started) {
      await this.#consumer.start();
      this.#started = true;
    }
    for (;;) {
      const batch = await this.#queue.wait(this.#signal);
      if (batch === null) return { done: true, value: undefined };
      this.#batch = batch;
      this.#cursor.start(batch.readable, batch.fromOffset);
      const m = this.#nextBuffered();
      if (m !== null) return { done: false, value: m };
    }
  }

  #enter(batch: ConsumerBatch): Promise<IteratorResult<ConsumerMessage>> {
    this.#batch = batch;
    this.#cursor.start(batch.readable, batch.fromOffset);
    const m = this.#nextBuffered();
    return m !== null ? Promise.resolve({ done: false, value: m }) : this.next();
  }

  /** The next record of the current batch, or null when it is done (or stale). */
  #nextBuffered(): ConsumerMessage | null {
    const batch = this.#batch;
    if (batch === null) return null;
    const c = this.#cursor;
    if (batch.source.paused) {
      // Paused mid-batch: the rest waits for the resume.
      this.#batch = null;
      this.#putBack(batch);
      return null;
    }
    if (batch.stale || !c.next()) {
      this.#batch = null;
      return null;
    }
    batch.source.position = c.offset + 1;
    return new FetchedMessage(batch.topic, batch.partition, c);
  }
}

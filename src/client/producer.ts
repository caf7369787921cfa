/**
 * The producer: places each message on a partition, batches per partition in the
 * RecordAccumulator, keeps up to `maxInFlight` produce requests per partition on the wire, and
 * retries retriable failures.
 *
 * Delivery is at-least-once: a batch whose connection dropped before its response came may or may
 * not have been stored, and is sent again, so it may be stored twice, unless the producer is
 * idempotent (its batches carry a producer id and sequence numbers the partition checks). Order within a partition
 * holds across a lost connection (the accumulator resends its failed batches in their original
 * order, once all its batches in flight have come back); a batch retried after another retriable
 * error may land after batches that were stored meanwhile, unless `maxInFlight` is 1.
 *
 * Messages that cannot be appended yet — the buffer is full, or the topic's partition count is
 * still being learned — wait in a FIFO of parallel arrays (no object per message) and everything
 * sent after them waits behind them, so order is kept. The FIFO is bounded too: past `bufferBytes`
 * of waiting records a send fails at once with BUFFER_FULL (retriable), so a caller that does not
 * await its sends cannot grow memory without limit. A waiting send whose `signal` aborts leaves the
 * FIFO and fails with ABORTED; once appended to a batch it can no longer be recalled.
 */

import { type CodecId, type CodecName, codecFromName, compress } from "../format/codecs/index.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { HEADER_SIZE } from "../format/layout.js";
import { headersBlockSize, type RecordHeaders } from "../format/record-headers.js";

export type { RecordHeaders } from "../format/record-headers.js";

import { checkTopicName } from "../format/topic-name.js";
import { microtask } from "../net/microtask.js";
import { Acks, type AcksValue } from "../protocol/api.js";
import { decodeInitProducerIdResponse, encodeInitProducerIdRequest } from "../protocol/init-producer-id.js";
import {
  decodeProduceResponse,
  encodeProduceRequestHeader,
  type ProduceResponse,
} from "../protocol/produce.js";
import type { MultiProduceResponse, PartitionProduceResult } from "../protocol/produce-v2.js";
import { abortable } from "./abort.js";
import { BrokerPool } from "./broker-pool.js";
import { byteLength } from "./byte-length.js";
import type { Connection, ResponseListener } from "./connection.js";
import { ConnectionManager } from "./connection-manager.js";
import { abortedError, asConchError } from "./errors.js";
import { type ClientOptions, connectionManagerOptions, durationOption, integerOption } from "./options.js";
import { partitionForKey, StickyPartitioner } from "./partitioner.js";
import { ProduceOutbox } from "./produce-outbox.js";
import {
  type ProducerBatch,
  type RecordMetadata,
  type Reject,
  type Resolve,
  type SendBatchResult,
  SendGroup,
} from "./producer-batch.js";
import { RecordAccumulator } from "./record-accumulator.js";
import type { SpreadBatch } from "./spread-batch.js";
import { SPREAD_MIN_MESSAGES, SPREAD_MIN_PARTITIONS, SpreadBuilder } from "./spread-send.js";
import { DEFAULT_METADATA_MAX_AGE_MS, TopicMetadata } from "./topic-metadata.js";

export type { RecordMetadata, SendBatchResult } from "./producer-batch.js";

export type AcksSetting = "none" | "leader" | "durable" | "all";

export interface ProducerOptions {
  /** When the broker answers: "none" (never; offsets are -1), "leader" (stored), "durable" (fsynced). Default "leader". */
  acks?: AcksSetting;
  /** A partition's batch is sealed at this size. Default 256 KiB (capped by the broker's maxBatchBytes). */
  batchBytes?: number;
  /** Longest time a record waits for more to join its batch. Default 0: only records sent in the same tick are coalesced. */
  lingerMs?: number;
  /** Produce requests in flight per partition. Default 5. */
  maxInFlight?: number;
  /**
   * Idempotent: the producer asks the broker for a producer id (InitProducerId) and numbers each
   * partition's batches, so a batch retried after a lost answer is stored once, answered with the
   * offsets it was stored at (docs/client.md). Needs acks "leader" or "durable". Default false.
   */
  idempotent?: boolean;
  /** Memory for records not yet acknowledged; past it `send` waits. Default 32 MiB. */
  bufferBytes?: number;
  /** Retries of a batch after retriable errors. Default: unlimited within `deliveryTimeoutMs`. */
  retries?: number;
  /** First retry backoff step, doubling up to `retryBackoffMaxMs`. Defaults 100 ms and 1 s. */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /**
   * The longest a send may take, from `send()` to its promise settling, across reconnects and
   * retries: past it the message fails with TIMEOUT saying how many attempts were made and why the
   * last one failed. Default 120 s.
   */
  deliveryTimeoutMs?: number;
  /**
   * How often the partition counts of the topics sent to are asked again, so that partitions added
   * to a topic get messages too. Default 5 minutes; at least 100 ms.
   */
  metadataMaxAgeMs?: number;
  /**
   * Compresses each batch's records as one block with this codec (docs/format.md); consumers
   * decompress transparently. Default "none". A codec whose package did not install fails here,
   * with UNSUPPORTED_COMPRESSION naming it.
   */
  compression?: CodecName;
}

export interface SendOptions {
  /**
   * Aborting it withdraws the send while it waits for buffer memory or metadata (it fails with
   * ABORTED). A message already appended to a batch cannot be recalled: the abort is then ignored
   * and the send completes as usual. For sendBatch, the messages still waiting are withdrawn and
   * the call fails with ABORTED; those already appended may still be stored.
   */
  signal?: AbortSignal | undefined;
}

/** A waiting send's abort listener and how many of its messages still wait (sendBatch: several). */
interface ParkedAbort {
  readonly signal: AbortSignal;
  readonly listener: () => void;
  waiting: number;
}

export interface ProducerMessage {
  /** Null or absent: no key. An empty key is a key (as in Kafka). */
  key?: Uint8Array | string | null | undefined;
  /** Null: a null value; with a key, a tombstone, which compaction reads as "delete this key". */
  value: Uint8Array | string | null;
  /**
   * Headers: an object (`{ "trace-id": "abc" }`, in its key order) or a list of `[key, value]`
   * pairs (for an order of your own and repeated keys). Values are strings, bytes or null.
   */
  headers?: RecordHeaders | null | undefined;
  /** Milliseconds since the epoch; default now. */
  timestamp?: number | undefined;
  /** Overrides the partitioner. */
  partition?: number | undefined;
}

/** The codec named by the option, its package loaded now so that a missing one fails here. */
function compressionOption(name: CodecName | undefined): CodecId {
  const codec = codecFromName(name ?? "none");
  compress(codec, new Uint8Array(1));
  return codec;
}

const ACKS: Record<AcksSetting, AcksValue> = {
  none: Acks.NONE,
  leader: Acks.LEADER,
  durable: Acks.DURABLE,
  all: Acks.ALL,
};

// One executor for every promise: it hands out the resolvers without a closure per message.
let capturedResolve: unknown = null;
let capturedReject: unknown = null;
function capture(resolve: unknown, reject: unknown): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

export class Producer {
  #manager: ConnectionManager;
  /** Batches go to their partition's leader; the bootstrap connection is #manager. */
  #pool: BrokerPool;
  /** Sealed batches waiting for the end of the operation that sealed them. */
  #outbox: ProduceOutbox;
  #metadata: TopicMetadata;
  #acc: RecordAccumulator;
  #acks: AcksValue;
  #requestTimeoutMs: number;
  #retries: number;
  #retryBackoffMs: number;
  #retryBackoffMaxMs: number;
  #deliveryTimeoutMs: number;
  #bufferBytes: number;
  #sticky = new Map<string, StickyPartitioner>();
  /** Topic names found legal, so a name is checked once, not at every send (bounded: see #badTopic). */
  #legalTopics = new Set<string>();
  #lastLegalTopic: string | null = null;
  // The FIFO of parked messages, as parallel arrays from #parkHead on.
  #parkTopics: string[] = [];
  #parkMessages: ProducerMessage[] = [];
  #parkA: Array<Resolve | SendGroup> = [];
  #parkB: Array<Reject | number> = [];
  #parkHead = 0;
  /** Bytes of the records waiting in the FIFO, bounded by bufferBytes. */
  #parkBytes: number[] = [];
  /** When each waiting message was sent (monotonic ms), for its delivery deadline. */
  #parkSentAt: number[] = [];
  #parkedBytes = 0;
  /** Waiting sends that have a signal, by their resolver or group. Empty on the fast path. */
  #parkAborts = new Map<Resolve | SendGroup, ParkedAbort>();
  #parkedEver = 0;
  #unparkedEver = 0;
  /** Why the head of the FIFO could not be appended. */
  #blockedOnMemory = false;
  #progressWaiters: Array<() => void> = [];
  /** One timer for every delivery deadline: armed for the earliest one, null when none is pending. */
  #expiryTimer: NodeJS.Timeout | null = null;
  #expiryAt = Number.POSITIVE_INFINITY;
  #closing = false;
  #closed: Promise<void> | null = null;
  readonly #idempotent: boolean;
  /** The InitProducerId request under way, or waiting for its retry. */
  #askingProducerId = false;
  /** Builds spread sends (spread-send.ts); null for a producer that cannot send them. */
  readonly #spread: SpreadBuilder | null;
  /** Spread batches not yet answered. */
  readonly #spreads = new Set<SpreadBatch>();
  /** Spread batches whose records went back to the ordinary path (flush waits for those too). */
  #spreadResends = 0;

  constructor(client: ClientOptions, options: ProducerOptions = {}) {
    const conn = connectionManagerOptions(client);
    this.#requestTimeoutMs = conn.requestTimeoutMs;
    this.#acks = ACKS[options.acks ?? "leader"];
    if (this.#acks === undefined) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `acks must be "none", "leader", "durable" or "all", not ${JSON.stringify(options.acks)}`,
      );
    }
    this.#retries = integerOption("retries", options.retries, Number.MAX_SAFE_INTEGER);
    this.#retryBackoffMs = durationOption("retryBackoffMs", options.retryBackoffMs, 100, 1);
    this.#retryBackoffMaxMs = durationOption("retryBackoffMaxMs", options.retryBackoffMaxMs, 1000, 1);
    this.#deliveryTimeoutMs = durationOption("deliveryTimeoutMs", options.deliveryTimeoutMs, 120_000, 1);
    this.#bufferBytes = integerOption("bufferBytes", options.bufferBytes, 32 << 20, 1024);
    this.#idempotent = options.idempotent === true;
    // Partitioned batches carry no producer fields and no codec.
    this.#spread =
      this.#idempotent || compressionOption(options.compression) !== 0 ? null : new SpreadBuilder();
    if (this.#idempotent && this.#acks === Acks.NONE) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        'an idempotent producer needs acks "leader" or "durable"',
      );
    }
    this.#acc = new RecordAccumulator(
      {
        batchBytes: integerOption("batchBytes", options.batchBytes, 256 << 10, 1024),
        lingerMs: durationOption("lingerMs", options.lingerMs, 0, 0, 60_000),
        maxInFlight: integerOption("maxInFlight", options.maxInFlight, 5, 1, 1000),
        bufferBytes: this.#bufferBytes,
        deliveryTimeoutMs: this.#deliveryTimeoutMs,
        // Without responses nothing tells when a batch's bytes have left the socket.
        recycleBuffers: this.#acks !== Acks.NONE,
        compression: compressionOption(options.compression),
        ...(this.#idempotent ? { idempotent: { needProducerId: () => this.#askProducerId() } } : {}),
      },
      this.#sendBatch,
    );
    this.#acc.onRoom = () => {
      this.#unpark();
      this.#wakeProgress();
    };
    const managerOptions = {
      ...conn,
      onConnect: (c: Connection) => {
        this.#acc.maxBatchBytes = c.maxBatchBytes;
      },
    };
    this.#manager = new ConnectionManager(managerOptions);
    this.#outbox = new ProduceOutbox(this.#acks, this.#requestTimeoutMs, {
      sendAlone: (leader, batch) => this.#sendAlone(leader, batch),
      produced: (batch, baseOffset) => this.#settle(batch, baseOffset),
      failed: (batch, err) => this.#onError(batch, err),
      spreadAnswered: (spread, res, err) => this.#spreadAnswered(spread, res, err),
    });
    this.#pool = new BrokerPool(this.#manager, managerOptions);
    this.#metadata = new TopicMetadata(
      this.#pool,
      { learned: () => this.#unpark(), failed: (topic, err) => this.#dropParked(topic, err) },
      this.#deliveryTimeoutMs,
      integerOption("metadataMaxAgeMs", options.metadataMaxAgeMs, DEFAULT_METADATA_MAX_AGE_MS, 100),
    );
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closing;
  }

  /** Bytes of records buffered and not yet acknowledged. */
  get bufferedBytes(): number {
    return this.#acc.usedBytes;
  }

  /** Whether a send now would be appended at once rather than wait for memory or metadata. */
  get hasRoom(): boolean {
    return this.#parkHead === this.#parkTopics.length && this.#acc.usedBytes < this.#bufferBytes;
  }

  /** Resolves when `hasRoom` is true: lets a fire-and-forget sender bound its own memory too. */
  async waitForRoom(signal?: AbortSignal): Promise<void> {
    while (!this.hasRoom && !this.#closing) await abortable(this.#nextProgress(), signal, "waitForRoom");
  }

  /**
   * Connects now, and learns the partition counts of `topics`, instead of at the first send.
   * Optional: a send connects on its own. Rejects as the connection or a lookup failed (an unknown
   * topic: UNKNOWN_TOPIC), within the request timeout; aborting `signal`
   * ends the wait (ABORTED).
   */
  async connect(topics: readonly string[] = [], signal?: AbortSignal): Promise<void> {
    if (this.#closing) throw closedError();
    for (const t of topics) {
      const bad = this.#badTopic(t);
      if (bad !== null) throw bad;
    }
    await this.#manager.connection(signal);
    await abortable(Promise.all(topics.map((t) => this.#metadata.ensure(t))), signal, "connect");
  }

  /** Sends one message; resolves with where it was stored once acknowledged per `acks`. */
  send(topic: string, message: ProducerMessage, options?: SendOptions): Promise<RecordMetadata> {
    const promise = new Promise<RecordMetadata>(capture);
    const resolve = capturedResolve as Resolve;
    const reject = capturedReject as Reject;
    const signal = options?.signal;
    const bad = this.#badTopic(topic);
    if (this.#closing) reject(closedError());
    else if (bad !== null) reject(bad);
    else if (signal?.aborted === true) reject(abortedError(signal, "send"));
    else this.#enqueue(topic, message, resolve, reject, undefined, signal);
    return promise;
  }

  /** Sends many messages with one promise; cheaper than `send` per message. */
  sendBatch(
    topic: string,
    messages: readonly ProducerMessage[],
    options?: SendOptions,
  ): Promise<SendBatchResult> {
    const promise = new Promise<SendBatchResult>(capture);
    const group = new SendGroup(
      messages.length,
      capturedResolve as (r: SendBatchResult) => void,
      capturedReject as Reject,
    );
    const signal = options?.signal;
    const bad = this.#badTopic(topic);
    if (this.#closing) group.fail(closedError());
    else if (bad !== null) group.fail(bad);
    else if (signal?.aborted === true) group.fail(abortedError(signal, "sendBatch"));
    else if (messages.length === 0) return Promise.resolve(group.result());
    else {
      // One clock read per call: on some machines Date.now() costs as much as encoding a record.
      const now = Date.now();
      if (this.#spread !== null && this.#sendSpread(topic, messages, group, now)) return promise;
      for (let i = 0; i < messages.length; i++) {
        if (!this.#enqueue(topic, messages[i]!, group, i, now, signal)) break;
      }
    }
    return promise;
  }

  /**
   * Sends every buffered message now and resolves once all messages sent before the call are
   * acknowledged or failed. Failures are reported to their senders, not here. Aborting `signal`
   * ends the wait (ABORTED), not the sending.
   */
  async flush(signal?: AbortSignal): Promise<void> {
    let parkedBefore = this.#parkedEver;
    for (;;) {
      const parkedDone = this.#unparkedEver >= parkedBefore;
      const resends = this.#spreadResends;
      this.#acc.sealAll();
      const waits: Promise<void>[] = this.#acc.unsettled().map((b) => b.whenSettled());
      for (const spread of this.#spreads) waits.push(spread.whenSettled());
      if (waits.length > 0) await abortable(Promise.all(waits), signal, "flush");
      if (this.#spreadResends !== resends) {
        // A spread send's records went back to the ordinary path meanwhile: wait for them too.
        parkedBefore = this.#parkedEver;
        continue;
      }
      if (parkedDone) return;
      if (waits.length === 0) await abortable(this.#nextProgress(), signal, "flush");
    }
  }

  /** Flushes, then closes the connection. Sends after close fail with ABORTED. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing = true;
      try {
        await this.flush();
      } finally {
        this.#acc.failUnsent(closedError());
        this.#acc.stop();
        if (this.#expiryTimer !== null) clearTimeout(this.#expiryTimer);
        this.#expiryTimer = null;
        this.#metadata.close();
        this.#pool.close();
        this.#wakeProgress();
      }
    })();
    return this.#closed;
  }

  /**
   * Why `topic` cannot be written (INVALID_TOPIC_NAME, the broker's own rule: no topic could have
   * the name, and the broker's internal topics are not for clients), or null.
   */
  #badTopic(topic: string): ConchError | null {
    if (topic === this.#lastLegalTopic) return null;
    if (!this.#legalTopics.has(topic)) {
      try {
        checkTopicName(topic);
      } catch (err) {
        return err as ConchError;
      }
      // A producer writing to ever new topics does not grow this without bound.
      if (this.#legalTopics.size >= 4096) this.#legalTopics.clear();
      this.#legalTopics.add(topic);
    }
    this.#lastLegalTopic = topic;
    return null;
  }

  /**
   * Sends the call as spread batches (spread-send.ts) if it qualifies and nothing of the topic
   * waits before it; false: it takes the ordinary path. The batches join the outbox after whatever
   * this operation has handed it already, so nothing sent earlier lands after them.
   */
  #sendSpread(topic: string, messages: readonly ProducerMessage[], group: SendGroup, now: number): boolean {
    // The cheap checks first: most calls are not spread, and quietFor walks the active queues.
    if (messages.length < SPREAD_MIN_MESSAGES) return false;
    if (this.#parkHead < this.#parkTopics.length || !this.#pool.knows(topic)) return false;
    const n = this.#metadata.partitionCount(topic);
    if (n === undefined || n < SPREAD_MIN_PARTITIONS || !this.#acc.quietFor(topic)) return false;
    const maxBytes = Math.min(this.#acc.maxBatchBytes, this.#acc.room);
    const built = this.#spread!.build(topic, messages, group, now, n, maxBytes, this.#leaderOf);
    if (built === null) return false;
    for (const [, spread] of built) {
      this.#acc.reserve(spread.bytes);
      this.#spreads.add(spread);
    }
    microtask(() => {
      for (const [leader, spread] of built) this.#outbox.add(leader, spread);
    });
    return true;
  }

  #leaderOf = (topic: string, partition: number): ConnectionManager => this.#pool.leaderFor(topic, partition);

  /**
   * A spread batch's answer: each record acknowledged at its partition's base offset plus its
   * rank; a partition that failed for a reason worth retrying (or the whole request, lost with its
   * connection) has its records sent again the ordinary way, in call order; any other failure
   * fails the call, as a batch's would.
   */
  #spreadAnswered(spread: SpreadBatch, res: MultiProduceResponse | null, err: ConchError | null): void {
    this.#spreads.delete(spread);
    const { topic, group, indices, partitions, ranks } = spread;
    let resend: Set<number> | null = null;
    let all = false;
    if (err !== null) {
      if (this.#spreadRetriable(err, topic, -1)) all = true;
      else group.fail(err);
    } else if (res === null) {
      for (let j = 0; j < indices.length; j++) group.ack(indices[j]!, 1, partitions[j]!, -1);
    } else {
      const results = new Map<number, PartitionProduceResult>();
      for (const r of res.partitions) results.set(r.partition, r);
      for (let j = 0; j < indices.length; j++) {
        const p = partitions[j]!;
        const r = results.get(p);
        if (r === undefined) {
          group.fail(
            new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed response: no result for partition ${p}`),
          );
          break;
        }
        if (r.errorCode === ErrorCode.NONE) group.ack(indices[j]!, 1, p, r.baseOffset + ranks[j]!);
        else if (resend === null || !resend.has(p)) {
          const e = new ConchError(r.errorCode, r.message);
          if (this.#spreadRetriable(e, topic, p)) (resend ??= new Set()).add(p);
          else {
            group.fail(e);
            break;
          }
        }
      }
    }
    spread.settle();
    this.#acc.unreserve(spread.bytes);
    if (all || resend !== null) {
      this.#spreadResends++;
      for (let j = 0; j < indices.length; j++) {
        if (!all && !resend!.has(partitions[j]!)) continue;
        const i = indices[j]!;
        if (!this.#enqueue(topic, spread.messages[i]!, group, i, spread.now)) break;
      }
    }
    this.#wakeProgress();
  }

  /** Whether a spread send's failure (of partition `p`, or -1: the whole request) is sent again. */
  #spreadRetriable(e: ConchError, topic: string, p: number): boolean {
    if (this.#manager.closed) return false;
    const retriable =
      e.retriable ||
      ((e.code === ErrorCode.UNKNOWN_TOPIC || e.code === ErrorCode.UNKNOWN_PARTITION) &&
        p >= 0 &&
        this.#pool.names(topic, p));
    if (retriable) this.#pool.leaderFailed(e);
    return retriable;
  }

  /** `now` stands in for a message without a timestamp; undefined: the time it is appended. */
  #enqueue(
    topic: string,
    m: ProducerMessage,
    a: Resolve | SendGroup,
    b: Reject | number,
    now?: number,
    signal?: AbortSignal,
  ): boolean {
    if (this.#parkHead < this.#parkTopics.length || !this.#tryAppend(topic, m, a, b, now)) {
      const bytes = recordBytes(m);
      if (this.#parkedBytes + bytes > this.#bufferBytes && this.#parkHead < this.#parkTopics.length) {
        const err = new ConchError(
          ErrorCode.BUFFER_FULL,
          `the producer's buffer is full and ${this.#parkedBytes} bytes of sends already wait for it (bufferBytes ${this.#bufferBytes}); await sends, or use waitForRoom()`,
        );
        // A sendBatch fails whole: its messages already waiting are withdrawn too.
        if (a instanceof SendGroup) this.#withdraw(a, err);
        else fail(a, b, err);
        return false;
      }
      this.#parkTopics.push(topic);
      this.#parkMessages.push(m);
      this.#parkA.push(a);
      this.#parkB.push(b);
      this.#parkBytes.push(bytes);
      const sentAt = performance.now();
      this.#parkSentAt.push(sentAt);
      this.#armExpiry(sentAt + this.#deliveryTimeoutMs);
      this.#parkedBytes += bytes;
      this.#parkedEver++;
      if (signal !== undefined) this.#watchParked(a, signal);
      if (this.#blockedOnMemory) this.#acc.pressure = true;
    }
    return true;
  }

  /** A waiting send with a signal: aborting it withdraws the send's waiting messages. */
  #watchParked(a: Resolve | SendGroup, signal: AbortSignal): void {
    const known = this.#parkAborts.get(a);
    if (known !== undefined) {
      known.waiting++;
      return;
    }
    const listener = (): void =>
      this.#withdraw(a, abortedError(signal, a instanceof SendGroup ? "sendBatch" : "send"));
    this.#parkAborts.set(a, { signal, listener, waiting: 1 });
    signal.addEventListener("abort", listener, { once: true });
  }

  /** One message of `a` left the FIFO (appended or failed): stop watching once none waits. */
  #leftPark(a: Resolve | SendGroup): void {
    const watch = this.#parkAborts.get(a);
    if (watch === undefined || --watch.waiting > 0) return;
    this.#parkAborts.delete(a);
    watch.signal.removeEventListener("abort", watch.listener);
  }

  /** Takes every waiting message of `a` out of the FIFO and fails `a` with `err`. */
  #withdraw(a: Resolve | SendGroup, err: ConchError): void {
    const watch = this.#parkAborts.get(a);
    if (watch !== undefined) {
      this.#parkAborts.delete(a);
      watch.signal.removeEventListener("abort", watch.listener);
    }
    let b: Reject | number | undefined;
    let write = this.#parkHead;
    for (let i = this.#parkHead; i < this.#parkTopics.length; i++) {
      if (this.#parkA[i] === a) {
        b = this.#parkB[i];
        this.#parkedBytes -= this.#parkBytes[i]!;
        this.#unparkedEver++;
        continue;
      }
      this.#parkTopics[write] = this.#parkTopics[i]!;
      this.#parkMessages[write] = this.#parkMessages[i]!;
      this.#parkA[write] = this.#parkA[i]!;
      this.#parkB[write] = this.#parkB[i]!;
      this.#parkBytes[write] = this.#parkBytes[i]!;
      this.#parkSentAt[write] = this.#parkSentAt[i]!;
      write++;
    }
    this.#parkTopics.length = write;
    this.#parkMessages.length = write;
    this.#parkA.length = write;
    this.#parkB.length = write;
    this.#parkBytes.length = write;
    this.#parkSentAt.length = write;
    if (b !== undefined) fail(a, b, err);
    else if (a instanceof SendGroup) a.fail(err);
    // What waited behind the withdrawn sends may fit now.
    this.#setHead(this.#parkHead);
    this.#unpark();
    this.#wakeProgress();
  }

  /**
   * Appends the message (or rejects it if invalid); false if it must wait. `sentAt`: when a message
   * that waited was sent, which brings its batch's deadline forward.
   */
  #tryAppend(
    topic: string,
    m: ProducerMessage,
    a: Resolve | SendGroup,
    b: Reject | number,
    now?: number,
    sentAt?: number,
  ): boolean {
    const value = m.value;
    const key = m.key ?? null;
    const headers = m.headers ?? null;
    const ts = m.timestamp ?? now;
    const valueBytes = value === null ? 0 : byteLength(value);
    const keyBytes = key === null ? 0 : byteLength(key);
    if (valueBytes < 0 || keyBytes < 0)
      return fail(a, b, invalid("value must be a string, bytes or null; key also"));
    const headersBytes = headers === null ? 0 : headersBlockSize(headers);
    if (headersBytes < 0) {
      return fail(
        a,
        b,
        invalid("headers must be an object or a list of [key, value] pairs; values strings, bytes or null"),
      );
    }
    if (ts !== undefined && !(Number.isSafeInteger(ts) && ts >= 0)) {
      return fail(a, b, invalid(`timestamp must be a non-negative integer of ms, not ${ts}`));
    }
    const bytes = HEADER_SIZE + keyBytes + valueBytes + headersBytes;
    if (!this.#acc.fitsInBatch(bytes)) {
      const max = this.#acc.maxBatchBytes;
      return fail(
        a,
        b,
        new ConchError(ErrorCode.BATCH_TOO_LARGE, `a ${bytes}-byte record cannot fit a ${max}-byte batch`),
      );
    }
    let partition = m.partition;
    let sticky: StickyPartitioner | undefined;
    if (partition === undefined) {
      const n = this.#metadata.partitionCount(topic);
      if (n === undefined) {
        this.#blockedOnMemory = false;
        return false;
      }
      if (key === null) {
        sticky = this.#sticky.get(topic);
        if (sticky === undefined) this.#sticky.set(topic, (sticky = new StickyPartitioner()));
        partition = sticky.next(n);
        // A full batch here moves the sticky partition on, rather than start a tiny batch behind it.
        if (n > 1 && this.#acc.wouldSeal(topic, partition, bytes)) {
          sticky.advance();
          partition = sticky.next(n);
        }
      } else {
        partition = partitionForKey(key, n);
      }
    } else if (!Number.isInteger(partition) || partition < 0 || partition > 0xffffffff) {
      return fail(a, b, invalid(`partition must be a non-negative integer, not ${partition}`));
    }
    if (!this.#acc.hasRoom(bytes)) {
      this.#blockedOnMemory = true;
      return false;
    }
    const batch = this.#acc.append(topic, partition, value, key, ts, bytes, a, b, headers);
    sticky?.stick(batch);
    if (sentAt !== undefined && sentAt + this.#deliveryTimeoutMs < batch.deadline)
      batch.deadline = sentAt + this.#deliveryTimeoutMs;
    if (this.#expiryTimer === null) this.#armExpiry(batch.deadline);
    return true;
  }

  #unpark(): void {
    const topics = this.#parkTopics;
    let head = this.#parkHead;
    const start = head;
    while (
      head < topics.length &&
      this.#tryAppend(
        topics[head]!,
        this.#parkMessages[head]!,
        this.#parkA[head]!,
        this.#parkB[head]!,
        undefined,
        this.#parkSentAt[head]!,
      )
    ) {
      this.#parkedBytes -= this.#parkBytes[head]!;
      if (this.#parkAborts.size > 0) this.#leftPark(this.#parkA[head]!);
      head++;
    }
    this.#unparkedEver += head - start;
    this.#setHead(head);
    if (head !== start) this.#wakeProgress();
  }

  /** The topic's partition count cannot be learned: its waiting messages fail. */
  #dropParked(topic: string, err: ConchError): void {
    const keep = {
      topics: [] as string[],
      messages: [] as ProducerMessage[],
      a: [] as Array<Resolve | SendGroup>,
      b: [] as Array<Reject | number>,
      bytes: [] as number[],
      sentAt: [] as number[],
    };
    for (let i = this.#parkHead; i < this.#parkTopics.length; i++) {
      if (this.#parkTopics[i] === topic && this.#parkMessages[i]!.partition === undefined) {
        fail(this.#parkA[i]!, this.#parkB[i]!, err);
        this.#parkedBytes -= this.#parkBytes[i]!;
        this.#leftPark(this.#parkA[i]!);
        this.#unparkedEver++;
      } else {
        keep.topics.push(this.#parkTopics[i]!);
        keep.messages.push(this.#parkMessages[i]!);
        keep.a.push(this.#parkA[i]!);
        keep.b.push(this.#parkB[i]!);
        keep.bytes.push(this.#parkBytes[i]!);
        keep.sentAt.push(this.#parkSentAt[i]!);
      }
    }
    this.#parkTopics = keep.topics;
    this.#parkMessages = keep.messages;
    this.#parkA = keep.a;
    this.#parkB = keep.b;
    this.#parkBytes = keep.bytes;
    this.#parkSentAt = keep.sentAt;
    this.#parkHead = 0;
    this.#unpark();
    this.#wakeProgress();
  }

  #setHead(head: number): void {
    if (head === this.#parkTopics.length) {
      // Called after every acknowledgement: with nothing parked there is nothing to replace.
      if (head > 0) {
        this.#parkTopics = [];
        this.#parkMessages = [];
        this.#parkA = [];
        this.#parkB = [];
        this.#parkBytes = [];
        this.#parkSentAt = [];
      }
      this.#parkedBytes = 0;
      this.#parkHead = 0;
      this.#acc.pressure = false;
      return;
    }
    // Drop the consumed front now and then so the arrays do not grow without bound.
    if (head > 1024 && head * 2 > this.#parkTopics.length) {
      this.#parkTopics = this.#parkTopics.slice(head);
      this.#parkMessages = this.#parkMessages.slice(head);
      this.#parkA = this.#parkA.slice(head);
      this.#parkB = this.#parkB.slice(head);
      this.#parkBytes = this.#parkBytes.slice(head);
      this.#parkSentAt = this.#parkSentAt.slice(head);
      head = 0;
    }
    this.#parkHead = head;
  }

  #nextProgress(): Promise<void> {
    return new Promise<void>((resolve) => this.#progressWaiters.push(resolve));
  }

  #wakeProgress(): void {
    const waiters = this.#progressWaiters;
    if (waiters.length === 0) return;
    this.#progressWaiters = [];
    for (const w of waiters) w();
  }

  #encodeProduce = (correlationId: number, batch: ProducerBatch): Buffer =>
    encodeProduceRequestHeader(
      correlationId,
      batch.topic,
      batch.partition,
      this.#acks,
      this.#requestTimeoutMs,
      batch.records.length,
    );

  #sendBatch = (batch: ProducerBatch): void => {
    // A topic's first batches wait for one Metadata round trip (after that, and on a single node,
    // this is a map read): sent to the bootstrap broker they would be refused by a non-leader.
    if (!this.#pool.knows(batch.topic)) {
      void this.#pool.whenKnown(batch.topic).then(() => this.#sendToLeader(batch));
      return;
    }
    this.#sendToLeader(batch);
  };

  /** Batches sealed in one operation go out together (produce-outbox.ts). */
  #sendToLeader(batch: ProducerBatch): void {
    this.#outbox.add(this.#pool.leaderFor(batch.topic, batch.partition), batch);
  }

  /** One batch in a Produce version 1 request. */
  #sendAlone(leader: ConnectionManager, batch: ProducerBatch): void {
    if (this.#acks === Acks.NONE) {
      leader.send(this.#encodeProduce, batch, batch.records).then(
        () => this.#settle(batch, -1),
        (err: unknown) => this.#onError(batch, err),
      );
      return;
    }
    leader.requestTo(
      this.#encodeProduce,
      batch,
      decodeProduceResponse,
      this.#produced,
      batch,
      undefined,
      batch.records,
    );
  }

  /** One listener for every produce request; the batch comes back as the request's context. */
  readonly #produced: ResponseListener<ProduceResponse, ProducerBatch> = {
    responded: (res, batch) => this.#settle(batch, res.baseOffset),
    requestFailed: (err, batch) => this.#onError(batch, err),
  };

  /** Asks the broker for a producer id, once; a failure is asked again after a backoff. */
  #askProducerId(): void {
    if (this.#askingProducerId || this.#closing) return;
    this.#askingProducerId = true;
    let attempts = 0;
    const ask = (): void => {
      attempts++;
      this.#manager.request(encodeInitProducerIdRequest, undefined, decodeInitProducerIdResponse).then(
        (res) => this.#acc.setProducer(res.producerId, res.producerEpoch),
        (err: unknown) => {
          // Batches waiting meanwhile fail by their delivery deadline if the broker never answers.
          if (!this.#closing) setTimeout(ask, this.#retryDelay(asConchError(err), attempts)).unref();
        },
      );
    };
    ask();
  }

  #settle(batch: ProducerBatch, baseOffset: number): void {
    batch.complete(baseOffset);
    this.#acc.done(batch);
  }

  #onError(batch: ProducerBatch, err: unknown): void {
    const e = asConchError(err);
    batch.lastError = e;
    // Failed by its delivery deadline while in flight: its messages were told then.
    if (batch.settled) {
      this.#acc.done(batch);
      return;
    }
    const late = performance.now() >= batch.deadline;
    // Idempotent: a batch that overtook one being retried finds a gap; it goes again after it.
    const retriable =
      e.retriable ||
      (this.#idempotent && e.code === ErrorCode.OUT_OF_ORDER_SEQUENCE) ||
      // A leader that has not yet taken up a partition of a topic just created (cluster mode).
      ((e.code === ErrorCode.UNKNOWN_TOPIC || e.code === ErrorCode.UNKNOWN_PARTITION) &&
        this.#pool.names(batch.topic, batch.partition));
    if (retriable && !late && !this.#manager.closed && batch.attempts <= this.#retries) {
      // The leader may have moved: the retry goes wherever the refreshed metadata says.
      this.#pool.leaderFailed(e);
      this.#acc.retry(batch, this.#retryDelay(e, batch.attempts));
      return;
    }
    if (e.code === ErrorCode.UNKNOWN_TOPIC || e.code === ErrorCode.UNKNOWN_PARTITION) {
      this.#metadata.invalidate(batch.topic);
    }
    batch.fail(late && retriable ? this.#batchTimedOut(batch) : e);
    this.#acc.done(batch);
  }

  /** Makes sure the expiry timer fires by `at` (Infinity: nothing to wait for). */
  #armExpiry(at: number): void {
    if (this.#expiryTimer !== null) {
      if (this.#expiryAt <= at) return;
      clearTimeout(this.#expiryTimer);
      this.#expiryTimer = null;
    }
    if (at === Number.POSITIVE_INFINITY) return;
    this.#expiryAt = at;
    this.#expiryTimer = setTimeout(this.#expire, Math.max(1, Math.ceil(at - performance.now())));
  }

  /** Fails every send whose delivery deadline has passed, and waits for the next deadline. */
  #expire = (): void => {
    this.#expiryTimer = null;
    this.#expiryAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = this.#acc.expire(now, this.#batchTimedOut);
    const ms = this.#deliveryTimeoutMs;
    // The FIFO is in send order: the messages past their deadline are the ones at its head.
    let head = this.#parkHead;
    const start = head;
    const sentAt = this.#parkSentAt;
    while (head < sentAt.length && sentAt[head]! + ms <= now) {
      const a = this.#parkA[head]!;
      fail(a, this.#parkB[head]!, this.#waitTimedOut());
      this.#parkedBytes -= this.#parkBytes[head]!;
      if (this.#parkAborts.size > 0) this.#leftPark(a);
      head++;
    }
    if (head < sentAt.length) next = Math.min(next, sentAt[head]! + ms);
    if (head !== start) {
      this.#unparkedEver += head - start;
      this.#setHead(head);
      this.#unpark();
      this.#wakeProgress();
    }
    this.#armExpiry(next);
  };

  #batchTimedOut = (batch: ProducerBatch): ConchError => {
    const attempts = batch.attempts;
    const last = batch.lastError;
    const what =
      attempts === 0
        ? "it was never sent (it waited for an earlier batch of its partition)"
        : `${attempts} attempt${attempts === 1 ? "" : "s"} to send its batch`;
    const why = last === null ? "" : `; the last failed with ${last.codeName}: ${last.message}`;
    return new ConchError(
      ErrorCode.TIMEOUT,
      `not acknowledged within deliveryTimeoutMs (${this.#deliveryTimeoutMs} ms) of send() to ${batch.topic}/${batch.partition}: ${what}${why}${this.#connectionProblem()}`,
      { cause: last ?? undefined },
    );
  };

  #waitTimedOut(): ConchError {
    const reason = this.#blockedOnMemory
      ? `buffer memory (bufferBytes ${this.#bufferBytes})`
      : "the topic's partition count";
    return new ConchError(
      ErrorCode.TIMEOUT,
      `not acknowledged within deliveryTimeoutMs (${this.#deliveryTimeoutMs} ms) of send(): it was still waiting for ${reason}, never sent${this.#connectionProblem()}`,
    );
  }

  /** While no broker is reachable: why, for a timeout's message. */
  #connectionProblem(): string {
    const last = this.#manager.lastError;
    if (this.#manager.current !== null || last === null) return "";
    return `; no connection to ${this.#manager.describe()} (${last.message})`;
  }

  /** A lost connection is retried at once (the reconnect has its own backoff); other errors back off. */
  #retryDelay(e: ConchError, attempts: number): number {
    if (e.code === ErrorCode.CONNECTION_CLOSED && attempts === 1) return 0;
    const step = Math.min(this.#retryBackoffMaxMs, this.#retryBackoffMs * 2 ** Math.min(attempts - 1, 20));
    return step / 2 + Math.random() * (step / 2);
  }
}

/** What a message will take in a batch (0 for an invalid one: it fails when it is appended). */
function recordBytes(m: ProducerMessage): number {
  const key = m.key ?? null;
  const headers = m.headers ?? null;
  const bytes =
    HEADER_SIZE +
    (m.value === null ? 0 : byteLength(m.value)) +
    (key === null ? 0 : byteLength(key)) +
    (headers === null ? 0 : headersBlockSize(headers));
  return Math.max(bytes, HEADER_SIZE);
}

function fail(a: Resolve | SendGroup, b: Reject | number, err: ConchError): true {
  if (a instanceof SendGroup) a.fail(err);
  else (b as Reject)(err);
  return true;
}

function invalid(message: string): ConchError {
  return new ConchError(ErrorCode.INVALID_REQUEST, message);
}

function closedError(): ConchError {
  return new ConchError(ErrorCode.ABORTED, "the producer is closed");
}

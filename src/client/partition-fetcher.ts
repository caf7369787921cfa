/**
 * The fetch loop of one assigned partition.
 *
 * It opens a fetch stream (protocol/fetch-stream.ts): the broker pushes each new batch as it is
 * written, without a request per batch, and sends at most a window ahead of what the application
 * has taken: the partition's share of the consumer's `maxPrefetchBytes`, between two responses'
 * worth (2 x maxBytes, as with one fetch in flight and one batch waiting) and eight (streamWindow).
 * Taking batches credits their bytes back, a half window at a time. So memory stays bounded by the
 * prefetch bytes, or two responses per partition for a consumer of many, and a consumer that keeps
 * up costs the broker one write per batch and a read per half window of credit. A seek or stop cancels the stream; an error ends it, and the loop
 * opens another from where it was.
 *
 * Against a broker without streams (UNKNOWN_API) it fetches instead: one fetch (a long poll) in
 * flight while at most one fetched batch waits for the application; when the application takes
 * that batch the next fetch starts.
 *
 * Retriable errors (a lost connection, a broker restart) back off and fetch again from the same
 * offset, so the partition resumes exactly where it was. OFFSET_OUT_OF_RANGE is handled by the
 * reset policy; any other error is reported and stops the partition, and so is a corrupt batch,
 * whether the broker met it (CORRUPT_BATCH) or the client's CRC check did (CorruptBatchError).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { OffsetSpec } from "../protocol/api.js";
import {
  decodeFetchResponse,
  encodeFetchRequest,
  type FetchRequest,
  type FetchResponse,
} from "../protocol/fetch.js";
import {
  encodeFetchStreamRequest,
  encodeStreamCredit,
  type FetchStreamRequest,
} from "../protocol/fetch-stream.js";
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from "../protocol/list-offsets.js";
import { Backoff, delay } from "./backoff.js";
import type { BrokerPool } from "./broker-pool.js";
import type { Connection, RequestOptions, ResponseListener } from "./connection.js";
import type { ConnectionManager } from "./connection-manager.js";
import { type BatchSource, ConsumerBatch } from "./consumer-batch.js";
import { CorruptBatchError } from "./corrupt-batch-error.js";
import { abortedError, asConchError } from "./errors.js";

/** The largest credit or window a u32 field holds. */
const MAX_U32 = 0xffffffff;

/**
 * How far a stream may run ahead of the application: its share of the consumer's prefetch bytes,
 * but at least two responses' worth (one being read while the next comes) and at most eight.
 */
export function streamWindow(maxBytes: number, shareBytes: number): number {
  return Math.min(Math.max(2 * maxBytes, Math.min(8 * maxBytes, shareBytes)), MAX_U32);
}

/** Where a partition starts: the log start, the end, an offset, or the first record at or after a time. */
export type StartPosition = "earliest" | "latest" | { offset: number } | { timestamp: number };

/**
 * What to do when the position is outside the log: "earliest" never skips data that is still
 * retained (below the log start: go to the log start; past the end, as after a broker lost an
 * unflushed tail: go to the end); "latest" always goes to the end; "error" reports it.
 */
export type ResetPolicy = "earliest" | "latest" | "error";

/** A consumer group member fetching as its partitions' owner (docs/groups.md); read at every fetch. */
export interface FetchMember {
  group: string;
  memberId: string;
  generation: number;
}

export interface FetchSettings {
  /** Set for a group member: every fetch carries its group, id and generation (Fetch version 2). */
  member?: FetchMember | undefined;
  maxWaitMs: number;
  maxBytes: number;
  minBytes: number;
  resetPolicy: ResetPolicy;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** Check each fetched batch's CRC32C before handing it on. */
  checkCrcs: boolean;
  /** A stream's share of the consumer's prefetch bytes (streamWindow); the consumer sets it per assignment. */
  streamShareBytes: number;
}

/** Where fetched batches and fatal errors go. */
export interface FetchSink {
  deliver(batch: ConsumerBatch): void;
  fail(source: PartitionFetcher, err: ConchError): void;
}

export class PartitionFetcher implements BatchSource {
  readonly topic: string;
  readonly partition: number;
  epoch = 0;
  position = -1;
  /** The last high watermark seen, or -1. */
  highWatermark = -1;
  paused = false;
  #start: StartPosition;
  #fetchOffset = -1;
  #buffered = 0;
  #inFlight = false;
  #stopped = false;
  /**
   * Aborts the fetch in flight on a seek or stop. One controller serves every round until it is
   * used: an AbortSignal per long poll lived long enough to be promoted, and a tailing consumer's
   * process then ran a mark-compact every second or two (docs/performance/hot-path.md, third round).
   */
  #round = new AbortController();
  #positionWaiters: Array<() => void> = [];
  /** Set once the broker turned a stream down as an unknown API: fetch one request at a time. */
  #poll = false;
  /** The open stream's connection and id; null and 0 when none is open. */
  #streamConn: Connection | null = null;
  #streamId = 0;
  #windowBytes = 0;
  /** Bytes taken (or skipped) and not yet credited to the stream. */
  #uncredited = 0;
  /** Batches of an earlier stream still waiting when the current one opened: not its to credit. */
  #earlierBatches = 0;
  readonly #request: FetchRequest;
  readonly #streamRequest: FetchStreamRequest;
  #requestOptions: RequestOptions = {};
  #backoff: Backoff;
  #pool: BrokerPool;
  #settings: FetchSettings;
  #sink: FetchSink;

  constructor(
    topic: string,
    partition: number,
    start: StartPosition,
    pool: BrokerPool,
    settings: FetchSettings,
    sink: FetchSink,
  ) {
    this.topic = topic;
    this.partition = partition;
    this.#start = start;
    this.#pool = pool;
    this.#settings = settings;
    this.#sink = sink;
    this.#request = {
      topic,
      partition,
      offset: 0,
      maxBytes: settings.maxBytes,
      maxWaitMs: settings.maxWaitMs,
      minBytes: settings.minBytes,
    };
    this.#streamRequest = {
      ...this.#request,
      windowBytes: 0,
      group: "",
      memberId: "",
      generation: 0,
    };
    this.#backoff = new Backoff({ initialMs: settings.retryBackoffMs, maxMs: settings.retryBackoffMaxMs });
  }

  /** The partition leader's connection, looked up at each use so that a new leader is used at once. */
  get #manager(): ConnectionManager {
    return this.#pool.leaderFor(this.topic, this.partition);
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Resolves once the partition's start position is resolved to an offset (or it stopped). */
  whenPositioned(): Promise<void> {
    if (this.position >= 0 || this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve) => this.#positionWaiters.push(resolve));
  }

  /**
   * Stops fetching until `resume`: the fetch or stream in flight ends; what was fetched is kept
   * (BatchQueue holds it back) and the partition goes on from there when resumed.
   */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.#abortRound();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.pump();
  }

  /** Moves the partition: batches already fetched become stale, the fetch in flight is dropped. */
  seek(start: StartPosition): void {
    this.epoch++;
    this.#start = start;
    this.#fetchOffset = -1;
    // An offset is the position at once, so that a group commits it even before the next fetch.
    this.position =
      typeof start === "object" && "offset" in start && isOffset(start.offset) ? start.offset : -1;
    this.#buffered = 0;
    this.#abortRound();
    this.pump();
  }

  /** Stops fetching for good (unassigned, or the consumer closed): what was fetched goes stale. */
  stop(): void {
    this.epoch++;
    this.#halt();
  }

  #halt(): void {
    this.#stopped = true;
    this.#abortRound();
    this.#positioned();
  }

  /** The application took a batch of this partition: room for the next. */
  taken(batch: ConsumerBatch): void {
    if (batch.epoch !== this.epoch) return;
    this.#buffered--;
    if (this.#poll) this.pump();
    else if (this.#earlierBatches > 0) this.#earlierBatches--;
    else this.#credit(batch.records.length);
  }

  /**
   * Opens the stream unless one is open (a round), or, fetching, starts the next fetch unless one
   * is in flight or a fetched batch is still waiting. While the position is known, a round is a
   * request with a listener: a consumer that keeps up gets its batches without a promise. Finding
   * the start position, errors and backoff are async.
   */
  pump(): void {
    if (this.#stopped || this.paused || this.#inFlight || (this.#poll && this.#buffered > 0)) return;
    this.#inFlight = true;
    if (this.#fetchOffset < 0) void this.#positionThenFetch(this.epoch, this.#round);
    else this.#fetch(this.#round);
  }

  async #positionThenFetch(epoch: number, round: AbortController): Promise<void> {
    let offset: number;
    try {
      // The first round of a partition asks its leader, not the bootstrap broker.
      await this.#pool.whenKnown(this.topic);
      offset = await this.#resolve(this.#start, round.signal);
    } catch (err) {
      await this.#slowEnd(epoch, err);
      return;
    }
    if (epoch !== this.epoch) {
      this.#roundEnded();
      return;
    }
    this.#fetchOffset = offset;
    if (this.position < 0) this.position = offset;
    this.#positioned();
    this.#fetch(round);
  }

  #fetch(round: AbortController): void {
    if (!this.#poll) {
      this.#openStream(round);
      return;
    }
    // The request is encoded before `requestTo` returns: one object serves every round.
    const req = this.#fill(this.#request, this.#manager.current?.maxBatchBytes ?? 0, 0, round);
    this.#manager.requestTo(
      encodeFetchRequest,
      req,
      decodeFetchResponse,
      this.#fetchDone,
      this.epoch,
      this.#requestOptions,
    );
  }

  /**
   * Fills what a fetch and a stream ask alike, from the settings (read at every round, so a group
   * member's new generation applies at once), and the options of the round.
   */
  #fill<R extends FetchRequest>(req: R, maxBatchBytes: number, minWaitMs: number, round: AbortController): R {
    const s = this.#settings;
    req.offset = this.#fetchOffset;
    // A response is at most one batch or maxBytes; keep it within the frames the broker may send.
    req.maxBytes = maxBatchBytes > 0 ? Math.min(s.maxBytes, maxBatchBytes) : s.maxBytes;
    req.maxWaitMs = Math.max(minWaitMs, s.maxWaitMs);
    req.minBytes = s.minBytes;
    const member = s.member;
    req.group = member?.group ?? "";
    req.memberId = member?.memberId ?? "";
    req.generation = member?.generation ?? 0;
    const options = this.#requestOptions;
    if (options.signal !== round.signal || options.extraWaitMs !== req.maxWaitMs) {
      this.#requestOptions = { signal: round.signal, extraWaitMs: req.maxWaitMs };
    }
    return req;
  }

  #openStream(round: AbortController): void {
    const c = this.#manager.current;
    if (c !== null) {
      this.#streamOn(c, round);
      return;
    }
    const epoch = this.epoch;
    this.#manager.connection(round.signal).then(
      (conn) => this.#streamOn(conn, round),
      (err: unknown) => void this.#slowEnd(epoch, err),
    );
  }

  #streamOn(conn: Connection, round: AbortController): void {
    // A stream waits at least 1 ms between empty responses.
    const req = this.#fill(this.#streamRequest, conn.maxBatchBytes, 1, round);
    req.windowBytes = this.#windowBytes = streamWindow(req.maxBytes, this.#settings.streamShareBytes);
    this.#earlierBatches = this.#buffered;
    this.#uncredited = 0;
    const id = conn.streamTo(
      encodeFetchStreamRequest,
      req,
      decodeFetchResponse,
      this.#streamed,
      this.epoch,
      this.#requestOptions,
    );
    this.#streamConn = id === 0 ? null : conn;
    this.#streamId = id;
  }

  /** The stream's listener: every response, then how it ended. Its context is its epoch. */
  readonly #streamed: ResponseListener<FetchResponse, number> = {
    responded: (res, epoch) => this.#pushed(res, epoch),
    requestFailed: (err, epoch) => {
      this.#streamConn = null;
      this.#streamId = 0;
      void this.#slowEnd(epoch, err);
    },
  };

  #pushed(res: FetchResponse, epoch: number): void {
    // A stream of an earlier epoch: its cancel is on its way.
    if (epoch !== this.epoch) return;
    if (!this.#accept(res)) {
      // Data that does not reach our offset: a broker bug. The connection closes over it.
      throw new ConchError(ErrorCode.INVALID_BATCH, `a stream sent data before offset ${this.#fetchOffset}`);
    }
  }

  /**
   * Hands a response's batches from the fetch offset on to the application (a fetch's or a
   * stream's). False when it holds data but none of it reaches the offset, which only a broker bug
   * could send.
   */
  #accept(res: FetchResponse): boolean {
    this.#backoff.reset();
    this.highWatermark = res.highWatermark;
    let batch: ConsumerBatch | null;
    try {
      batch = ConsumerBatch.slice(
        this,
        res.records,
        this.#fetchOffset,
        res.highWatermark,
        this.#settings.checkCrcs,
        this.#manager.current?.maxBatchBytes || undefined,
      );
    } catch (err) {
      // Damaged data: fetching it again would fetch the same bytes. The partition stops here.
      this.#failed(asConchError(err));
      return true;
    }
    if (batch === null) return res.records.length === 0;
    this.#fetchOffset = batch.nextOffset;
    this.#buffered++;
    // Batches wholly before the offset are skipped: a stream gets their credit now.
    if (!this.#poll) this.#credit(res.records.length - batch.records.length);
    this.#sink.deliver(batch);
    const end = batch.records.byteOffset - res.records.byteOffset + batch.records.length;
    // Cut short before a corrupt batch: a stream would go on after it, so it starts again from it,
    // and the corrupt batch then comes first and stops the partition (once the ones before are read).
    if (end < res.records.length && !this.#poll) this.#abortRound();
    return true;
  }

  /** Credits taken bytes back to the stream, a half window at a time. */
  #credit(bytes: number): void {
    if (bytes <= 0) return;
    this.#uncredited += bytes;
    const conn = this.#streamConn;
    if (this.#uncredited < this.#windowBytes / 2 || conn === null || conn.closed) return;
    while (this.#uncredited > 0) {
      const n = Math.min(this.#uncredited, MAX_U32);
      conn.send(encodeStreamCredit, { streamId: this.#streamId, bytes: n });
      this.#uncredited -= n;
    }
  }

  /** Every fetch's listener; the request's context is the epoch it was sent in. */
  readonly #fetchDone: ResponseListener<FetchResponse, number> = {
    responded: (res, epoch) => this.#fetched(res, epoch),
    requestFailed: (err, epoch) => void this.#slowEnd(epoch, err),
  };

  #fetched(res: FetchResponse, epoch: number): void {
    if (epoch === this.epoch && !this.#accept(res)) {
      // Data that does not reach our offset: a broker bug; do not spin on it.
      void this.#slowEnd(epoch, null);
      return;
    }
    this.#roundEnded();
  }

  /**
   * Ends a round the slow way: after `err` is handled (reset, backoff, or the partition fails), or,
   * with null, after a backoff. A seek or stop meanwhile (a new epoch) skips both.
   */
  async #slowEnd(epoch: number, err: unknown): Promise<void> {
    const signal = this.#round.signal;
    try {
      if (epoch !== this.epoch) return;
      if (err !== null) await this.#onError(asConchError(err), signal);
      else await delay(this.#backoff.next(), signal, () => abortedError(signal, "fetch"));
    } catch (e) {
      if (epoch === this.epoch) await this.#onError(asConchError(e), signal);
    } finally {
      this.#roundEnded();
    }
  }

  #roundEnded(): void {
    this.#inFlight = false;
    this.pump();
  }

  /** Ends the round in flight, if any; the next round gets a fresh controller. */
  #abortRound(): void {
    this.#round.abort();
    this.#round = new AbortController();
  }

  #positioned(): void {
    const waiters = this.#positionWaiters;
    if (waiters.length === 0) return;
    this.#positionWaiters = [];
    for (const w of waiters) w();
  }

  async #onError(e: ConchError, signal: AbortSignal): Promise<void> {
    if (e.code === ErrorCode.ABORTED || this.#stopped) return;
    if (e.code === ErrorCode.UNKNOWN_API && !this.#poll) {
      // A broker that predates fetch streams: fetch instead, from now on.
      this.#poll = true;
      return;
    }
    if (e.code === ErrorCode.OFFSET_OUT_OF_RANGE && this.#settings.resetPolicy !== "error") {
      try {
        this.#fetchOffset = await this.#resetOffset(signal);
        // Nothing fetched is waiting, so the reset offset is what the application sees next.
        if (this.#buffered === 0) this.position = this.#fetchOffset;
        return;
      } catch (err) {
        e = asConchError(err);
        if (e.code === ErrorCode.ABORTED) return;
      }
    }
    // A group member's fetch refused during a rebalance: its group consumer rejoins and reassigns.
    if (e.retriable || e.code === ErrorCode.ILLEGAL_GENERATION || e.code === ErrorCode.UNKNOWN_MEMBER) {
      // The leader may have moved: the next round goes wherever the refreshed metadata says.
      this.#pool.leaderFailed(e);
      try {
        await delay(this.#backoff.next(), signal, () => abortedError(signal, "fetch"));
      } catch {
        // aborted: a seek or stop follows
      }
      return;
    }
    if (e.code === ErrorCode.CORRUPT_BATCH || e.code === ErrorCode.CORRUPT_DATA) {
      // The broker met damaged data where this partition reads: name where, as the CRC check does.
      e = new CorruptBatchError(this.topic, this.partition, this.#fetchOffset, e.message, {
        cause: e,
        code: e.code,
      });
    }
    this.#failed(e);
  }

  /**
   * Stops the partition for good and reports why to the application, after the batches already
   * delivered (they stay good: say, the ones before a corrupt batch).
   */
  #failed(e: ConchError): void {
    this.#halt();
    this.#sink.fail(this, e);
  }

  /** The offset the reset policy picks for a position outside [log start, end]. */
  async #resetOffset(signal: AbortSignal): Promise<number> {
    const end = await this.#resolve("latest", signal);
    if (this.#settings.resetPolicy === "latest" || this.#fetchOffset > end) return end;
    return this.#resolve("earliest", signal);
  }

  async #resolve(start: StartPosition, signal: AbortSignal): Promise<number> {
    if (typeof start === "object" && "offset" in start) {
      if (!isOffset(start.offset)) {
        throw new ConchError(
          ErrorCode.INVALID_REQUEST,
          `start offset must be a non-negative integer, not ${start.offset}`,
        );
      }
      return start.offset;
    }
    const spec =
      start === "earliest"
        ? OffsetSpec.EARLIEST
        : start === "latest"
          ? OffsetSpec.LATEST
          : OffsetSpec.TIMESTAMP;
    const timestampMs = typeof start === "object" ? start.timestamp : 0;
    const res = await this.#manager.request(
      encodeListOffsetsRequest,
      { topic: this.topic, partition: this.partition, spec, timestampMs },
      decodeListOffsetsResponse,
      { signal },
    );
    return res.offset;
  }
}

function isOffset(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/**
 * Where a producer's sealed batches wait for the end of the current operation, so that the batches
 * a flush makes ready for many partitions go out together: those of one topic led by one broker in
 * one Produce version 2 request (protocol/produce-v2.ts), split into several only past the broker's
 * frame limit or the request's partition limit. A broker that agreed to protocol version 1 in its
 * handshake, a connection not made yet, or a lone batch gets version 1 requests, one per batch, as
 * before.
 *
 * Nothing of a partition's order or retries changes: every batch keeps its own in-flight slot and
 * is settled, or retried, on its own from its partition's result; batches of one partition leave in
 * the order they were sealed (within a request the broker appends entries in order, and requests on
 * one connection are processed in order).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { microtask } from "../net/microtask.js";
import {
  Acks,
  type AcksValue,
  MULTI_PRODUCE_PROTOCOL_VERSION,
  PARTITIONED_PRODUCE_PROTOCOL_VERSION,
} from "../protocol/api.js";
import {
  decodeMultiProduceResponse,
  encodeMultiProduceRequest,
  MAX_PRODUCE_PARTITIONS,
  type MultiProduceRequest,
  type MultiProduceResponse,
  multiProduceRequestBytes,
} from "../protocol/produce-v2.js";
import { encodePartitionedProduceRequest, type PartitionedProduceRequest } from "../protocol/produce-v3.js";
import type { Connection, ResponseListener } from "./connection.js";
import type { ConnectionManager } from "./connection-manager.js";
import { ProducerBatch } from "./producer-batch.js";
import type { SpreadBatch } from "./spread-batch.js";

/** What the producer does with a batch's outcome. */
export interface OutboxSink {
  /** Sends one batch alone (Produce version 1). */
  sendAlone(manager: ConnectionManager, batch: ProducerBatch): void;
  /** The batch was stored at `baseOffset` (-1 with acks = 0). */
  produced(batch: ProducerBatch, baseOffset: number): void;
  /** The batch's partition, or its whole request, failed. */
  failed(batch: ProducerBatch, err: ConchError): void;
  /**
   * A spread batch's answer: per partition (`res`; null with acks = 0), or the whole request's
   * failure (`err`).
   */
  spreadAnswered(spread: SpreadBatch, res: MultiProduceResponse | null, err: ConchError | null): void;
}

type Entry = ProducerBatch | SpreadBatch;

/** The size field, which a frame limit does not count. */
const SIZE_FIELD_BYTES = 4;
/** partition u32 | records length u32 */
const ENTRY_BYTES = 8;
/**
 * A batch this large goes in a request of its own (version 1), whose records are written as they
 * are: copying it into a shared request would cost more than the request it saves. Gathering is
 * for the many small batches of a send spread over many partitions.
 */
const GATHER_MAX_BATCH_BYTES = 32 * 1024;

export class ProduceOutbox {
  readonly #acks: AcksValue;
  readonly #timeoutMs: number;
  readonly #sink: OutboxSink;
  /** Batches and their leaders, [0, count); the arrays are kept from one operation to the next. */
  #batches: Entry[] = [];
  #leaders: ConnectionManager[] = [];
  #count = 0;
  #armed = false;
  /** Requests sent, by version: for tests and diagnostics. */
  manyRequests = 0;
  aloneRequests = 0;
  spreadRequests = 0;

  constructor(acks: AcksValue, timeoutMs: number, sink: OutboxSink) {
    this.#acks = acks;
    this.#timeoutMs = timeoutMs;
    this.#sink = sink;
  }

  /**
   * Sends `batch` (or a spread batch, in a Produce version 3 request of its own) to `leader` once
   * the current operation ends, with the others added meanwhile, in the order they were added.
   */
  add(leader: ConnectionManager, batch: Entry): void {
    const i = this.#count++;
    this.#batches[i] = batch;
    this.#leaders[i] = leader;
    if (!this.#armed) {
      this.#armed = true;
      microtask(this.#flush);
    }
  }

  #flush = (): void => {
    this.#armed = false;
    const n = this.#count;
    this.#count = 0;
    if (n === 1) {
      const batch = this.#batches[0]!;
      const leader = this.#leaders[0]!;
      this.#clear(1);
      if (batch instanceof ProducerBatch) this.#sendAlone(leader, batch);
      else this.#sendSpread(leader, batch);
      return;
    }
    // By leader, then by topic, each in the order the batches came.
    const groups = new Map<ConnectionManager, Map<string, Entry[]>>();
    for (let i = 0; i < n; i++) {
      const leader = this.#leaders[i]!;
      const batch = this.#batches[i]!;
      let byTopic = groups.get(leader);
      if (byTopic === undefined) groups.set(leader, (byTopic = new Map()));
      const list = byTopic.get(batch.topic);
      if (list === undefined) byTopic.set(batch.topic, [batch]);
      else list.push(batch);
    }
    this.#clear(n);
    for (const [leader, byTopic] of groups) {
      const conn = leader.current;
      const many = conn !== null && conn.version >= MULTI_PRODUCE_PROTOCOL_VERSION;
      for (const [topic, list] of byTopic) {
        // Runs of ordinary batches between spread ones, each sent in its place.
        let start = 0;
        for (let i = 0; i <= list.length; i++) {
          const entry = list[i];
          if (entry !== undefined && entry instanceof ProducerBatch) continue;
          const run = start === 0 && i === list.length ? list : list.slice(start, i);
          if (many && run.length > 1) this.#sendMany(leader, conn, topic, run as ProducerBatch[]);
          else for (const batch of run) this.#sendAlone(leader, batch as ProducerBatch);
          if (entry !== undefined) this.#sendSpread(leader, entry);
          start = i + 1;
        }
      }
    }
  };

  #clear(n: number): void {
    this.#batches.fill(undefined as unknown as Entry, 0, n);
    this.#leaders.fill(undefined as unknown as ConnectionManager, 0, n);
  }

  /**
   * One request per run of small batches that fits the broker's frame limit and the partition
   * limit; a large batch goes alone, in its place in the order, so its records are written as
   * they are instead of copied into the request.
   */
  #sendMany(leader: ConnectionManager, conn: Connection, topic: string, batches: ProducerBatch[]): void {
    const limit = conn.maxFrameBytes + SIZE_FIELD_BYTES;
    const empty = multiProduceRequestBytes(topic, 0, 0);
    let start = 0;
    let bytes = empty;
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i]!;
      if (batch.records.length >= GATHER_MAX_BATCH_BYTES) {
        this.#sendRun(leader, conn, topic, batches, start, i);
        this.#sendAlone(leader, batch);
        start = i + 1;
        bytes = empty;
        continue;
      }
      const add = ENTRY_BYTES + batch.records.length;
      if (i > start && (bytes + add > limit || i - start === MAX_PRODUCE_PARTITIONS)) {
        this.#sendRun(leader, conn, topic, batches, start, i);
        start = i;
        bytes = empty;
      }
      bytes += add;
    }
    this.#sendRun(leader, conn, topic, batches, start, batches.length);
  }

  /** batches[start, end): none, one alone, or several in one request. */
  #sendRun(
    leader: ConnectionManager,
    conn: Connection,
    topic: string,
    batches: ProducerBatch[],
    start: number,
    end: number,
  ): void {
    if (end - start === 1) this.#sendAlone(leader, batches[start]!);
    else if (end - start > 1) {
      this.#sendRequest(
        conn,
        topic,
        start === 0 && end === batches.length ? batches : batches.slice(start, end),
      );
    }
  }

  #sendAlone(leader: ConnectionManager, batch: ProducerBatch): void {
    this.aloneRequests++;
    this.#sink.sendAlone(leader, batch);
  }

  /**
   * A spread batch in a Produce version 3 request. A connection that is gone, or agreed to a
   * lower protocol version since the batch was made, fails it as a lost connection would.
   */
  #sendSpread(leader: ConnectionManager, spread: SpreadBatch): void {
    const conn = leader.current;
    if (conn === null || conn.version < PARTITIONED_PRODUCE_PROTOCOL_VERSION) {
      const err = new ConchError(
        ErrorCode.CONNECTION_CLOSED,
        "the connection for a spread send is not ready",
      );
      this.#sink.spreadAnswered(spread, null, err);
      return;
    }
    this.spreadRequests++;
    const req: PartitionedProduceRequest = {
      topic: spread.topic,
      acks: this.#acks,
      timeoutMs: this.#timeoutMs,
      records: spread.records,
    };
    if (this.#acks !== Acks.NONE) {
      conn.requestTo(
        encodePartitionedProduceRequest,
        req,
        decodeMultiProduceResponse,
        this.#spreadAnswer,
        spread,
      );
      return;
    }
    try {
      conn.send(encodePartitionedProduceRequest, req);
    } catch (err) {
      this.#sink.spreadAnswered(spread, null, err as ConchError);
      return;
    }
    this.#sink.spreadAnswered(spread, null, null);
  }

  readonly #spreadAnswer: ResponseListener<MultiProduceResponse, SpreadBatch> = {
    responded: (res, spread) => this.#sink.spreadAnswered(spread, res, null),
    requestFailed: (err, spread) => this.#sink.spreadAnswered(spread, null, err),
  };

  #sendRequest(conn: Connection, topic: string, batches: ProducerBatch[]): void {
    this.manyRequests++;
    const req: MultiProduceRequest = {
      topic,
      acks: this.#acks,
      timeoutMs: this.#timeoutMs,
      partitions: batches,
    };
    if (this.#acks !== Acks.NONE) {
      conn.requestTo(encodeMultiProduceRequest, req, decodeMultiProduceResponse, this.#answered, batches);
      return;
    }
    // acks = 0: no response; the batches are done once handed to the connection.
    try {
      conn.send(encodeMultiProduceRequest, req);
    } catch (err) {
      this.#answered.requestFailed(err as ConchError, batches);
      return;
    }
    for (const batch of batches) this.#sink.produced(batch, -1);
  }

  /** One listener for every request; its batches come back as the request's context. */
  readonly #answered: ResponseListener<MultiProduceResponse, ProducerBatch[]> = {
    responded: (res, batches) => {
      const results = res.partitions;
      if (!matches(results, batches)) {
        const err = new ConchError(
          ErrorCode.MALFORMED_REQUEST,
          `malformed response: ${results.length} partition results for a request of ${batches.length}`,
        );
        for (const batch of batches) this.#sink.failed(batch, err);
        return;
      }
      for (let i = 0; i < batches.length; i++) {
        const r = results[i]!;
        if (r.errorCode === ErrorCode.NONE) this.#sink.produced(batches[i]!, r.baseOffset);
        else this.#sink.failed(batches[i]!, new ConchError(r.errorCode, r.message));
      }
    },
    requestFailed: (err, batches) => {
      for (const batch of batches) this.#sink.failed(batch, err);
    },
  };
}

/** Whether the results answer the batches, entry for entry. */
function matches(results: MultiProduceResponse["partitions"], batches: ProducerBatch[]): boolean {
  if (results.length !== batches.length) return false;
  for (let i = 0; i < batches.length; i++) if (results[i]!.partition !== batches[i]!.partition) return false;
  return true;
}

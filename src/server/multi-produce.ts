/**
 * Produce version 2 (protocol/produce-v2.ts): one topic's batches for many partitions. Each entry
 * goes to the broker's produceTo in request order before the handler returns, exactly as a version 1
 * request for that partition would (acks, idempotent producers, metrics, cluster leadership), and
 * so joins the same write pass (storage/write-pass.ts) as the request's other entries. The request
 * is one ReplyTicket that counts the entries still appending; each entry's answer object is its own
 * append listener, so a request costs one object per partition and no promise at all.
 *
 * Produce version 3 (protocol/produce-v3.ts): its one partitioned batch is written once to the
 * broker's shared log, its records deferred in their partitions' logs (broker/shared-produce.ts),
 * and the request answered once the shared log has it (after waiting for the opens of partitions
 * not open yet, broker/produce-gate.ts); where the broker cannot defer them (cluster mode, a
 * partition still to be recovered after a crash, a compacted or flush=sync topic, acks all), the
 * batch is split by partition into entries answered as version 2's.
 */
import type { Acks, PartitionedProduce } from "../broker/broker-requests.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { PartitionIndex } from "../format/partition-index.js";
import { splitPartitionedBatch } from "../format/partitioned-batch.js";
import { batchError, checkPartitionedBatch } from "../format/validate.js";
import {
  decodeMultiProduceRequest,
  encodeMultiProduceResponse,
  encodeStoredProduceResponse,
  MAX_PRODUCE_PARTITIONS,
  type PartitionProduceResult,
  type PartitionRecords,
} from "../protocol/produce-v2.js";
import { decodePartitionedProduceRequest } from "../protocol/produce-v3.js";
import type { AppendListener, AppendResult } from "../storage/partition-log.js";
import { authorize } from "./authorize.js";
import type { RequestContext } from "./handler.js";
import { ReplyTicket, type TicketOwner } from "./reply-ticket.js";
import { wireErrorCode, wireErrorMessage } from "./wire-error.js";

export function produceMany(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
  acksByWire: Readonly<Record<number, Acks>>,
): ReplyTicket {
  const req = decodeMultiProduceRequest(frame);
  authorize(ctx, "write", "topic", req.topic);
  // The records are views of the frame: produceTo copies them before it returns.
  const acks = acksByWire[req.acks]!;
  return appendEach(ctx, ctx.tickets, correlationId, acks, req.topic, req.timeoutMs, req.partitions);
}

/**
 * Produce version 3 (protocol/produce-v3.ts): one partitioned batch, checked once and split into
 * one ordinary batch per partition, each then appended as a version 2 entry is. A batch that fails
 * its check, or is not alone in the request, fails the whole request and nothing is appended.
 */
export function producePartitioned(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
  acksByWire: Readonly<Record<number, Acks>>,
): ReplyTicket {
  const req = decodePartitionedProduceRequest(frame);
  authorize(ctx, "write", "topic", req.topic);
  const records = req.records as Buffer;
  // The frame bounds the batch; each partition's batch is held to the topic's limit when appended.
  const size = checkPartitionedBatch(records, 0, records.length, records.length);
  if (size < 0) throw batchError(size, 0);
  if (size !== records.length) {
    throw new ConchError(
      ErrorCode.INVALID_BATCH,
      "a partitioned produce carries one batch and nothing after it",
    );
  }
  const index = new PartitionIndex(records, 0);
  if (index.groups > MAX_PRODUCE_PARTITIONS) {
    throw new ConchError(
      ErrorCode.INVALID_REQUEST,
      `a produce request carries 1 to ${MAX_PRODUCE_PARTITIONS} partitions, not ${index.groups}`,
    );
  }
  const acks = acksByWire[req.acks]!;
  const reply = new PartitionedProduceReply(ctx, correlationId, acks, req.topic, req.timeoutMs, index);
  ctx.broker.producePartitioned(req.topic, records, index, acks, reply, req.timeoutMs);
  return reply;
}

/**
 * A version 3 request's answer. Deferred records: every partition answered at once, when the
 * shared log has written (or, acks durable, fsynced) the batch, or failed together when it could
 * not (or when the partitions it waited for did not open). Split: answered as version 2's entries
 * are, through a MultiProduceReply of its own.
 */
class PartitionedProduceReply extends ReplyTicket implements PartitionedProduce {
  readonly #ctx: RequestContext;
  readonly #acks: Acks;
  readonly #topic: string;
  readonly #timeoutMs: number;
  readonly #index: PartitionIndex;
  /** Each group's first offset, once deferred: the answer is written from these and the index. */
  #bases: readonly number[] | null = null;
  /** Every partition's failure, once it failed. */
  #failures: PartitionProduceResult[] | null = null;

  constructor(
    ctx: RequestContext,
    correlationId: number,
    acks: Acks,
    topic: string,
    timeoutMs: number,
    index: PartitionIndex,
  ) {
    super(ctx.tickets, correlationId);
    this.#ctx = ctx;
    this.#acks = acks;
    this.#topic = topic;
    this.#timeoutMs = timeoutMs;
    this.#index = index;
  }

  deferred(bases: readonly number[]): void {
    // Kept as they are: the answer, written once the shared log has the batch, is encoded from
    // them, with no result object per partition to outlive the request's turn.
    this.#bases = bases;
  }

  split(batch: Buffer): void {
    const entries = splitPartitionedBatch(batch, 0);
    const owner: TicketOwner = {
      answered: (_, reply) => this.reply(reply),
      failed: (_, err) => this.fail(err),
    };
    const { correlationId } = this;
    appendEach(this.#ctx, owner, correlationId, this.#acks, this.#topic, this.#timeoutMs, entries).register();
  }

  appended(): void {
    this.#answer();
  }

  appendFailed(err: Error): void {
    const errorCode = wireErrorCode(err);
    const message = wireErrorMessage(err);
    // Every partition fails, deferred or not (a request that failed before it was deferred: its
    // partitions did not open).
    this.#failures = Array.from(this.#index.partitions, (partition) => ({
      partition,
      errorCode,
      baseOffset: -1,
      lastOffset: -1,
      message,
    }));
    this.#ctx.limitedLog("produce failed", { err, topic: this.#topic }, "produce failed");
    this.#answer();
  }

  #answer(): void {
    // Told after `deferred` (the shared log tells in its write pass, after the handler returned) or
    // after a failure.
    const index = this.#index;
    const bases = this.#bases;
    if (this.#acks === "none") this.reply(null);
    else if (this.#failures === null && bases !== null) {
      this.reply(encodeStoredProduceResponse(this.correlationId, index.partitions, index.counts, bases));
    } else {
      this.reply(encodeMultiProduceResponse(this.correlationId, { partitions: this.#failures ?? [] }));
    }
  }
}

/** Hands each entry to the broker in order, every one answered in one reply once all have ended. */
function appendEach(
  ctx: RequestContext,
  owner: TicketOwner,
  correlationId: number,
  acks: Acks,
  topic: string,
  timeoutMs: number,
  entries: readonly PartitionRecords[],
): ReplyTicket {
  const n = entries.length;
  const ticket = new MultiProduceReply(ctx, owner, correlationId, acks, topic, n);
  const answers = ticket.answers;
  for (let i = 0; i < n; i++) {
    const entry = entries[i]!;
    const answer = new PartitionAnswer(ticket, entry.partition);
    answers[i] = answer;
    ctx.broker.produceTo(topic, entry.partition, entry.records as Buffer, acks, answer, timeoutMs);
  }
  ticket.started();
  return ticket;
}

/** The request's answer, sent once every entry's append has ended. */
class MultiProduceReply extends ReplyTicket {
  readonly answers: PartitionAnswer[];
  readonly #ctx: RequestContext;
  readonly #acks: Acks;
  readonly #topic: string;
  /** Entries still appending, plus one until every entry has been started. */
  #waiting: number;

  constructor(
    ctx: RequestContext,
    owner: TicketOwner,
    correlationId: number,
    acks: Acks,
    topic: string,
    n: number,
  ) {
    super(owner, correlationId);
    this.#ctx = ctx;
    this.#acks = acks;
    this.#topic = topic;
    this.answers = new Array<PartitionAnswer>(n);
    this.#waiting = n + 1;
  }

  started(): void {
    this.ended();
  }

  failed(answer: PartitionAnswer, err: Error): void {
    answer.errorCode = wireErrorCode(err);
    answer.message = wireErrorMessage(err);
    const fields = { err, topic: this.#topic, partition: answer.partition };
    if (answer.errorCode === ErrorCode.INTERNAL)
      this.#ctx.limitedLog("produce failed", fields, "produce failed");
    else this.#ctx.logger.debug(fields, "produce of one partition failed");
    this.ended();
  }

  /** An entry's append ended (or the start loop did): answers once every one has. */
  ended(): void {
    if (--this.#waiting > 0) return;
    // acks = 0: no response either way, though the request counted as in flight until now.
    this.reply(
      this.#acks === "none"
        ? null
        : encodeMultiProduceResponse(this.correlationId, { partitions: this.answers }),
    );
  }
}

/** One entry's result, and the listener of its append. */
class PartitionAnswer implements AppendListener, PartitionProduceResult {
  readonly partition: number;
  errorCode: number = ErrorCode.NONE;
  baseOffset = -1;
  lastOffset = -1;
  message = "";
  readonly #reply: MultiProduceReply;

  constructor(reply: MultiProduceReply, partition: number) {
    this.#reply = reply;
    this.partition = partition;
  }

  appended(result: AppendResult): void {
    this.baseOffset = result.baseOffset;
    this.lastOffset = result.lastOffset;
    this.#reply.ended();
  }

  appendFailed(err: Error): void {
    this.#reply.failed(this, err);
  }
}

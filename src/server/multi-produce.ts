/**
 * Produce version 2 (protocol/produce-v2.ts): one topic's batches for many partitions. Each entry
 * goes to the broker's produceTo in request order before the handler returns, exactly as a version 1
 * request for that partition would (acks, idempotent producers, metrics, cluster leadership), and
 * so joins the same write pass (storage/write-pass.ts) as the request's other entries. The request
 * is one ReplyTicket that counts the entries still appending; each entry's answer object is its own
 * append listener, so a request costs one object per partition and no promise at all.
 */
import type { Acks } from "../broker/broker-requests.js";
import { ErrorCode } from "../format/errors.js";
import {
  decodeMultiProduceRequest,
  encodeMultiProduceResponse,
  type PartitionProduceResult,
} from "../protocol/produce-v2.js";
import type { AppendListener, AppendResult } from "../storage/partition-log.js";
import { authorize } from "./authorize.js";
import type { RequestContext } from "./handler.js";
import { ReplyTicket } from "./reply-ticket.js";
import { wireErrorCode, wireErrorMessage } from "./wire-error.js";

export function produceMany(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
  acksByWire: Readonly<Record<number, Acks>>,
): ReplyTicket {
  const req = decodeMultiProduceRequest(frame);
  authorize(ctx, "write", "topic", req.topic);
  const acks = acksByWire[req.acks]!;
  const n = req.partitions.length;
  const ticket = new MultiProduceReply(ctx, correlationId, acks, req.topic, n);
  const answers = ticket.answers;
  for (let i = 0; i < n; i++) {
    const p = req.partitions[i]!;
    const answer = new PartitionAnswer(ticket, p.partition);
    answers[i] = answer;
    // The records are a view of the frame: produceTo copies them before it returns.
    ctx.broker.produceTo(req.topic, p.partition, p.records as Buffer, acks, answer, req.timeoutMs);
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

  constructor(ctx: RequestContext, correlationId: number, acks: Acks, topic: string, n: number) {
    super(ctx.tickets, correlationId);
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

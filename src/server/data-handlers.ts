/**
 * The data path: produce, fetch, list offsets. Batches are never decoded here: a produce hands the
 * records view of the frame to the broker, and a fetch answers with the stored bytes as they are,
 * behind a separately encoded header.
 */

import type { Acks, OffsetSpec } from "../broker/broker-requests.js";
import type { FetchListener } from "../broker/long-poll.js";
import { releaseReadBuffer } from "../format/read-buffers.js";
import { Acks as WireAcks, OffsetSpec as WireOffsetSpec } from "../protocol/api.js";
import { decodeFetchRequest } from "../protocol/fetch.js";
import { requestApiVersion } from "../protocol/frame.js";
import { decodeInitProducerIdRequest, encodeInitProducerIdResponse } from "../protocol/init-producer-id.js";
import { decodeListOffsetsRequest, encodeListOffsetsResponse } from "../protocol/list-offsets.js";
import { decodeProduceRequest, encodeProduceResponse } from "../protocol/produce.js";
import { PRODUCE_MULTI_VERSION } from "../protocol/produce-v2.js";
import { PRODUCE_PARTITIONED_VERSION } from "../protocol/produce-v3.js";
import type { AppendListener, AppendResult, ReadResult } from "../storage/partition-log.js";
import { authorize } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";
import { produceMany, producePartitioned } from "./multi-produce.js";
import { nativeFetchResponse } from "./native-records.js";
import { ReplyTicket } from "./reply-ticket.js";

/** The wire's acks numbers (protocol/api.ts) as the broker's values; the decoder refuses others. */
const ACKS_BY_WIRE: Record<number, Acks> = {
  [WireAcks.NONE]: "none",
  [WireAcks.LEADER]: "leader",
  [WireAcks.DURABLE]: "durable",
  [WireAcks.ALL]: "all",
};

/**
 * A fresh producer id for an idempotent producer. It needs no permission of its own (as after a
 * login any connection may ask): an id lets a producer write nothing it could not write without.
 */
export function initProducerId(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  decodeInitProducerIdRequest(frame);
  return ctx.broker.initProducerId().then((res) => encodeInitProducerIdResponse(correlationId, res));
}

export function produce(ctx: RequestContext, frame: Buffer, correlationId: number): ReplyTicket {
  // Version 2 carries many partitions of one topic (multi-produce.ts).
  const version = requestApiVersion(frame);
  if (version === PRODUCE_MULTI_VERSION) return produceMany(ctx, frame, correlationId, ACKS_BY_WIRE);
  // Version 3 carries one partitioned batch for many partitions (multi-produce.ts).
  if (version === PRODUCE_PARTITIONED_VERSION)
    return producePartitioned(ctx, frame, correlationId, ACKS_BY_WIRE);
  const req = decodeProduceRequest(frame);
  authorize(ctx, "write", "topic", req.topic);
  const acks = ACKS_BY_WIRE[req.acks]!;
  const ticket = new ProduceReply(ctx, correlationId, acks, req.topic, req.partition);
  // Called now, in arrival order: the broker assigns offsets before this call returns. A produce
  // refused at once reaches the ticket like a later failure (silent for acks = 0).
  ctx.broker.produceTo(req.topic, req.partition, req.records, acks, ticket, req.timeoutMs);
  return ticket;
}

/** A produce's answer, told by the partition log when the append is acknowledged or fails. */
class ProduceReply extends ReplyTicket implements AppendListener {
  readonly #ctx: RequestContext;
  readonly #acks: Acks;
  readonly #topic: string;
  readonly #partition: number;

  constructor(ctx: RequestContext, correlationId: number, acks: Acks, topic: string, partition: number) {
    super(ctx.tickets, correlationId);
    this.#ctx = ctx;
    this.#acks = acks;
    this.#topic = topic;
    this.#partition = partition;
  }

  appended(result: AppendResult): void {
    // acks = 0: no response either way; the request still counts as in flight until the append
    // completes, so a flood of fire-and-forget produces is throttled like any other.
    this.reply(this.#acks === "none" ? null : encodeProduceResponse(this.correlationId, result));
  }

  appendFailed(err: Error): void {
    if (this.#acks !== "none") {
      this.fail(err);
      return;
    }
    this.#ctx.logger.debug({ err, topic: this.#topic, partition: this.#partition }, "acks=0 produce failed");
    this.reply(null);
  }
}

export function fetch(ctx: RequestContext, frame: Buffer, correlationId: number): ReplyTicket {
  const req = decodeFetchRequest(frame);
  authorize(ctx, "read", "topic", req.topic);
  // Version 2 with a group: only the partition's owner in that generation may fetch (docs/groups.md).
  if (req.group !== undefined && req.group !== "") {
    ctx.broker.groups.checkOwner(
      req.group,
      req.memberId ?? "",
      req.generation ?? 0,
      req.topic,
      req.partition,
    );
  }
  const maxBytes = Math.min(req.maxBytes, ctx.maxFetchBytes);
  ctx.responseBytes = maxBytes;
  const ticket = new FetchReply(ctx.tickets, correlationId);
  const request = {
    topic: req.topic,
    partition: req.partition,
    offset: req.offset,
    maxBytes,
    maxWaitMs: req.maxWaitMs,
    minBytes: req.minBytes,
    signal: ctx.signal,
  };
  ctx.broker.fetchTo(request, ticket);
  return ticket;
}

/**
 * A fetch's answer: the header, then the stored batches as they are. A small answer is one buffer
 * with the batches copied in (net/socket-writes.ts); a large one is the header and the
 * batches' own buffer, written together.
 */
class FetchReply extends ReplyTicket implements FetchListener {
  fetched(r: ReadResult): void {
    let response: Buffer | Buffer[];
    try {
      response = nativeFetchResponse(this.correlationId, r);
    } catch (err) {
      releaseReadBuffer(r.records);
      this.fail(err);
      return;
    }
    this.reply(response);
  }

  fetchFailed(err: unknown): void {
    this.fail(err);
  }
}

export function listOffsets(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeListOffsetsRequest(frame);
  authorize(ctx, "read", "topic", req.topic);
  return ctx.broker
    .listOffsets(req.topic, req.partition, offsetSpecOf(req.spec, req.timestampMs))
    .then((r) => encodeListOffsetsResponse(correlationId, r));
}

/** The wire's ListOffsets spec (protocol/api.ts) as the broker's; the decoder refuses others. */
function offsetSpecOf(spec: number, timestampMs: number): OffsetSpec {
  if (spec === WireOffsetSpec.EARLIEST) return EARLIEST;
  if (spec === WireOffsetSpec.LATEST) return LATEST;
  return { kind: "timestamp", timestampMs };
}

const EARLIEST: OffsetSpec = { kind: "earliest" };
const LATEST: OffsetSpec = { kind: "latest" };

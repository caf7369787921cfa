/**
 * The data path: produce, fetch, list offsets. Batches are never decoded here: a produce hands the
 * records view of the frame to the broker, and a fetch answers with the stored bytes as they are,
 * behind a separately encoded header.
 */

import { Acks } from "../protocol/api.js";
import { decodeFetchRequest, encodeFetchResponseHeader } from "../protocol/fetch.js";
import { decodeListOffsetsRequest, encodeListOffsetsResponse } from "../protocol/list-offsets.js";
import { decodeProduceRequest, encodeProduceResponse } from "../protocol/produce.js";
import type { AppendResult, ReadResult } from "../storage/partition-log.js";
import type { Reply, RequestContext } from "./handler.js";

export function produce(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeProduceRequest(frame);
  // Called now, in arrival order: the broker assigns offsets before this call returns.
  const appended = ctx.broker.produce(req.topic, req.partition, req.records, req.acks);
  if (req.acks === Acks.NONE) {
    // No response either way; the request still counts as in flight until the append completes,
    // so a flood of fire-and-forget produces is throttled like any other.
    return appended.then(noReply, (err: unknown) => {
      ctx.logger.debug({ err, topic: req.topic, partition: req.partition }, "acks=0 produce failed");
      return null;
    });
  }
  return appended.then((r: AppendResult) => encodeProduceResponse(correlationId, r));
}

function noReply(): null {
  return null;
}

export function fetch(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeFetchRequest(frame);
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
  const maxBytes = Math.min(req.maxBytes, ctx.limits.maxFetchBytes);
  ctx.responseBytes = maxBytes;
  return ctx.broker
    .fetch(req.topic, req.partition, req.offset, maxBytes, req.maxWaitMs, req.minBytes, ctx.signal)
    .then((r: ReadResult) => [
      encodeFetchResponseHeader(correlationId, r.highWatermark, r.logStartOffset, r.records.length),
      r.records,
    ]);
}

export function listOffsets(ctx: RequestContext, frame: Buffer, correlationId: number): Promise<Reply> {
  const req = decodeListOffsetsRequest(frame);
  return ctx.broker
    .listOffsets(req.topic, req.partition, req.spec, req.timestampMs)
    .then((r) => encodeListOffsetsResponse(correlationId, r));
}

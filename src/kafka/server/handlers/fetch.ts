/**
 * Fetch, bounded by max_bytes as Kafka bounds it: a read returns at least one whole batch, so only
 * what is left of max_bytes (cut to the transport's cap) is asked of each partition in turn.
 *
 * 1. In request order, each partition is read for what is there now (no wait), asking for at most
 *    min(partition_max_bytes, what is left). Once nothing is left, the partitions after are
 *    answered with their offsets only, not read. So the answer exceeds max_bytes by one batch at
 *    most, as Kafka's may (a first batch larger than the limit is returned whole).
 * 2. If that is less than min_bytes and max_wait_ms > 0, the partitions that had nothing wait
 *    through the broker's long poll, each for what min_bytes still lacks; the first to answer with
 *    records (or an error) ends the others' waits, and they answer with what they have. Records
 *    past max_bytes, in request order, are left out of the answer (those partitions are read again
 *    next time).
 *
 * Stored batches are converted to Kafka batches (BatchConversion) with the same offsets. Conch
 * keeps no fetch sessions: session id 0 tells clients to send full requests (KIP-227).
 */
import type { FetchListener } from "../../../broker/long-poll.js";
import { releaseReadBuffer, releaseUnlessSent } from "../../../format/read-buffers.js";
import type { ReadResult } from "../../../storage/partition-log.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeFetchRequest,
  encodeFetchResponsePieces,
  type FetchPartition,
  type FetchPartitionResponse,
  type FetchRequest,
} from "../../protocol/fetch.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaErrorCode } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

/** Empty, not null: librdkafka cannot parse a null record set. */
const NO_RECORDS = Buffer.alloc(0);

export const fetchHandler: KafkaHandler = {
  doneWithFrame: true,
  largeResponse: true,
  handle(ctx, h) {
    const req = decodeFetchRequest(h);
    const maxBytes = ctx.responseCap(Math.max(req.maxBytes, 0));
    ctx.responseBytes = maxBytes;
    return answer(ctx, req, maxBytes).then((topics) => {
      const response = encodeFetchResponsePieces(h.correlationId, h.apiVersion, {
        throttleTimeMs: 0,
        errorCode: KafkaErrorCode.NONE,
        sessionId: 0,
        topics,
      });
      // A small response is one copy: the read buffers are free now. Pieces refer to them, and the
      // transport hands them back once written.
      if (Buffer.isBuffer(response)) for (const t of topics) for (const p of t.partitions) releaseRecords(p);
      return response;
    });
  },
};

/** One partition of the request and its answer, filled in as it is read. */
interface PartitionRead {
  topic: string;
  asked: FetchPartition;
  answer: FetchPartitionResponse;
  /** Stored bytes the last read returned. */
  bytes: number;
}

async function answer(
  ctx: KafkaContext,
  req: FetchRequest,
  maxBytes: number,
): Promise<{ topic: string; partitions: FetchPartitionResponse[] }[]> {
  const reads: PartitionRead[] = [];
  const topics = req.topics.map((t) => {
    const denied = kafkaRefusal(ctx, "read", "topic", t.topic);
    return {
      topic: t.topic,
      partitions: t.partitions.map((asked) => {
        const read: PartitionRead = { topic: t.topic, asked, answer: emptyAnswer(asked.partition), bytes: 0 };
        // A topic the principal may not read is answered with its refusal and never read.
        if (denied !== KafkaErrorCode.NONE) read.answer.errorCode = denied;
        else reads.push(read);
        return read.answer;
      }),
    };
  });
  let left = maxBytes;
  for (const r of reads) {
    if (left <= 0 || ctx.signal.aborted) {
      await offsetsOnly(ctx, r);
      continue;
    }
    await readPartition(ctx, r, Math.min(Math.max(r.asked.partitionMaxBytes, 0), left), 0, 0, undefined);
    left -= r.bytes;
  }
  const got = maxBytes - left;
  const minBytes = Math.max(req.minBytes, 0);
  if (got >= minBytes || req.maxWaitMs <= 0 || left <= 0 || ctx.signal.aborted) return topics;

  const waiting = reads.filter((r) => r.bytes === 0 && r.answer.errorCode === KafkaErrorCode.NONE);
  if (waiting.length === 0) return topics;
  const wake = new AbortController();
  const onAbort = (): void => wake.abort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.all(
      waiting.map((r) =>
        readPartition(
          ctx,
          r,
          Math.min(Math.max(r.asked.partitionMaxBytes, 0), left),
          req.maxWaitMs,
          minBytes - got,
          wake.signal,
        ).then(() => {
          if (r.bytes > 0 || r.answer.errorCode !== KafkaErrorCode.NONE) wake.abort();
        }),
      ),
    );
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
  }
  // Several waits may have ended with records at once: keep max_bytes, in request order.
  let used = 0;
  for (const r of reads) {
    if (r.bytes === 0) continue;
    if (used >= maxBytes) releaseRecords(r.answer);
    used += r.bytes;
  }
  return topics;
}

/** Drops `answer`'s records, handing back the read buffers they are views of. */
function releaseRecords(answer: FetchPartitionResponse): void {
  const records = answer.records;
  if (records === null) return;
  if (records instanceof Uint8Array) releaseReadBuffer(records);
  else for (const piece of records) releaseReadBuffer(piece);
  answer.records = NO_RECORDS;
}

function emptyAnswer(partitionIndex: number): FetchPartitionResponse {
  return {
    partitionIndex,
    errorCode: KafkaErrorCode.NONE,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: NO_RECORDS,
  };
}

/** A partition past max_bytes: its offsets, from the log, with nothing read. */
async function offsetsOnly(ctx: KafkaContext, r: PartitionRead): Promise<void> {
  try {
    // After a crash, the offsets of a partition not recovered yet are its log's once it is.
    await ctx.broker.recovered(r.topic, r.asked.partition);
    const view = ctx.broker.partitionView(r.topic, r.asked.partition);
    setOffsets(r.answer, view.highWatermark, view.logStartOffset);
  } catch (err) {
    r.answer.errorCode = kafkaErrorCode(err);
  }
}

function setOffsets(answer: FetchPartitionResponse, highWatermark: number, logStartOffset: number): void {
  answer.highWatermark = highWatermark;
  // No transactions: everything below the high watermark is stable.
  answer.lastStableOffset = highWatermark;
  answer.logStartOffset = logStartOffset;
}

/** Reads one partition through the broker's long poll into its answer. */
function readPartition(
  ctx: KafkaContext,
  r: PartitionRead,
  maxBytes: number,
  maxWaitMs: number,
  minBytes: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise((resolve) => {
    ctx.broker.fetchTo(
      {
        topic: r.topic,
        partition: r.asked.partition,
        offset: r.asked.fetchOffset,
        maxBytes,
        maxWaitMs,
        minBytes,
        signal: signal ?? ctx.signal,
      },
      new PartitionFetch(ctx, r, resolve),
    );
  });
}

class PartitionFetch implements FetchListener {
  readonly #ctx: KafkaContext;
  readonly #read: PartitionRead;
  readonly #done: () => void;

  constructor(ctx: KafkaContext, read: PartitionRead, done: () => void) {
    this.#ctx = ctx;
    this.#read = read;
    this.#done = done;
  }

  fetched(result: ReadResult): void {
    const r = this.#read;
    setOffsets(r.answer, result.highWatermark, result.logStartOffset);
    r.bytes = result.records.length;
    if (r.bytes > 0) {
      try {
        r.answer.records = this.#ctx.batches.toKafka(result.records);
      } catch (err) {
        r.answer.errorCode = kafkaErrorCode(err);
        r.answer.records = NO_RECORDS;
      }
      // Converted (or failed): the answer does not refer to the read's buffer, which is free.
      releaseUnlessSent(result.records, r.answer.records);
    }
    this.#done();
  }

  fetchFailed(err: unknown): void {
    this.#read.answer.errorCode = kafkaErrorCode(err);
    this.#ctx.logger.debug(
      { err, topic: this.#read.topic, partition: this.#read.asked.partition },
      "kafka fetch failed",
    );
    this.#done();
  }
}

/**
 * Fetch: every partition asked for is read through the broker's long poll (fetchTo), all at once.
 * A partition that has data answers at once; the others wait up to max_wait_ms for min_bytes.
 * The first partition to answer with records ends the others' waits (they answer with what they
 * have), so the response goes out as soon as anything is there, as Kafka's does; with nothing
 * anywhere, every wait ends at max_wait_ms. The request's max_bytes (cut to the transport's cap)
 * is shared out in request order, each partition taking at most its partition_max_bytes; as in
 * Kafka, a partition's first batch is returned whole even when it is larger.
 *
 * Stored batches are converted to Kafka batches (BatchConversion) with the same offsets. Conch
 * keeps no fetch sessions: session id 0 tells clients to send full requests (KIP-227).
 */
import type { FetchListener } from "../../../broker/long-poll.js";
import type { ReadResult } from "../../../storage/partition-log.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeFetchRequest,
  encodeFetchResponse,
  type FetchPartitionResponse,
  type FetchRequest,
} from "../../protocol/fetch.js";
import { kafkaErrorCode } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

const NO_RECORDS = Buffer.alloc(0);

export const fetchHandler: KafkaHandler = {
  doneWithFrame: true,
  largeResponse: true,
  handle(ctx, h) {
    const req = decodeFetchRequest(h);
    const maxBytes = ctx.responseCap(Math.max(req.maxBytes, 0));
    ctx.responseBytes = maxBytes;
    const reply = new FetchReply(ctx, req, h.correlationId, h.apiVersion);
    reply.start(maxBytes);
    return reply.promise;
  },
};

class FetchReply {
  readonly promise: Promise<Buffer>;
  readonly #ctx: KafkaContext;
  readonly #req: FetchRequest;
  readonly #correlationId: number;
  readonly #version: number;
  readonly #topics: { topic: string; partitions: FetchPartitionResponse[] }[] = [];
  /** Ends the other partitions' waits once one has answered, or when the connection ends. */
  readonly #wake = new AbortController();
  #waiting = 1;
  #resolve!: (reply: Buffer) => void;
  #onAbort = (): void => this.#wake.abort();

  constructor(ctx: KafkaContext, req: FetchRequest, correlationId: number, version: number) {
    this.#ctx = ctx;
    this.#req = req;
    this.#correlationId = correlationId;
    this.#version = version;
    this.promise = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  start(maxBytes: number): void {
    const ctx = this.#ctx;
    const req = this.#req;
    if (ctx.signal.aborted) this.#wake.abort();
    else ctx.signal.addEventListener("abort", this.#onAbort, { once: true });
    const maxWaitMs = Math.max(req.maxWaitMs, 0);
    const minBytes = Math.max(req.minBytes, 0);
    let budget = maxBytes;
    for (const t of req.topics) {
      const partitions: FetchPartitionResponse[] = [];
      this.#topics.push({ topic: t.topic, partitions });
      for (const p of t.partitions) {
        const answer: FetchPartitionResponse = {
          partitionIndex: p.partition,
          errorCode: KafkaErrorCode.NONE,
          highWatermark: -1,
          lastStableOffset: -1,
          logStartOffset: -1,
          abortedTransactions: null,
          preferredReadReplica: -1,
          // Empty, not null: librdkafka cannot parse a null record set.
          records: NO_RECORDS,
        };
        partitions.push(answer);
        // At least one byte, so a partition past the budget still learns its high watermark.
        const partitionBytes = Math.max(1, Math.min(Math.max(p.partitionMaxBytes, 0), budget));
        budget = Math.max(0, budget - partitionBytes);
        this.#waiting++;
        ctx.broker.fetchTo(
          {
            topic: t.topic,
            partition: p.partition,
            offset: p.fetchOffset,
            maxBytes: partitionBytes,
            maxWaitMs,
            minBytes,
            signal: this.#wake.signal,
          },
          new PartitionFetch(this, answer),
        );
      }
    }
    this.done();
  }

  fetched(answer: FetchPartitionResponse, r: ReadResult): void {
    answer.highWatermark = r.highWatermark;
    answer.lastStableOffset = r.highWatermark;
    answer.logStartOffset = r.logStartOffset;
    if (r.records.length > 0) {
      try {
        answer.records = this.#ctx.batches.toKafka(r.records);
      } catch (err) {
        answer.errorCode = kafkaErrorCode(err);
      }
      this.#wake.abort();
    }
    this.done();
  }

  fetchFailed(answer: FetchPartitionResponse, err: unknown): void {
    answer.errorCode = kafkaErrorCode(err);
    this.#ctx.logger.debug({ err, partition: answer.partitionIndex }, "kafka fetch failed");
    // An error is an answer too: the client should hear it now, not after the others' waits.
    this.#wake.abort();
    this.done();
  }

  done(): void {
    if (--this.#waiting > 0) return;
    this.#ctx.signal.removeEventListener("abort", this.#onAbort);
    this.#resolve(
      encodeFetchResponse(this.#correlationId, this.#version, {
        throttleTimeMs: 0,
        errorCode: KafkaErrorCode.NONE,
        sessionId: 0,
        topics: this.#topics,
      }),
    );
  }
}

class PartitionFetch implements FetchListener {
  readonly #reply: FetchReply;
  readonly #answer: FetchPartitionResponse;

  constructor(reply: FetchReply, answer: FetchPartitionResponse) {
    this.#reply = reply;
    this.#answer = answer;
  }

  fetched(result: ReadResult): void {
    this.#reply.fetched(this.#answer, result);
  }

  fetchFailed(err: unknown): void {
    this.#reply.fetchFailed(this.#answer, err);
  }
}

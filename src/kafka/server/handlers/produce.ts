/**
 * Produce: each partition's Kafka batches are converted at once (BatchConversion: checked whole,
 * CRC32C included, and refused whole when they hold what cannot be stored yet) and handed to the
 * broker in request order, so offsets follow the order requests came in. The answer waits for
 * every partition's append; with acks = 0 there is none, though the request still counts as in
 * flight until its appends complete, so a flood of fire-and-forget produces is throttled like any
 * other. Kafka's acks numbers are mapped to the broker's values here: 0 "none", 1 "leader", -1
 * "all"; anything else is answered INVALID_REQUIRED_ACKS. Versions 0-2 are advertised but every
 * partition of one is answered UNSUPPORTED_VERSION.
 */
import type { Acks } from "../../../broker/broker-requests.js";
import type { AppendListener, AppendResult } from "../../../storage/partition-log.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeProduceRequest,
  encodeProduceResponse,
  PRODUCE_FIRST_SERVED,
  type ProducePartitionResponse,
  type ProduceRequest,
} from "../../protocol/produce.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaErrorCode, kafkaErrorMessage } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

const ACKS_BY_WIRE = new Map<number, Acks>([
  [0, "none"],
  [1, "leader"],
  [-1, "all"],
]);

export const produceHandler: KafkaHandler = {
  // Record bytes are converted before handle returns; nothing of the frame is kept.
  doneWithFrame: true,
  handle(ctx, h) {
    const req = decodeProduceRequest(h);
    const acks = ACKS_BY_WIRE.get(req.acks);
    const reply = new ProduceReply(ctx, req, h.correlationId, h.apiVersion, acks);
    reply.start();
    return reply.promise;
  },
};

/** One produce request's partitions, appended in order, answered when all have completed. */
class ProduceReply {
  readonly promise: Promise<Buffer | null>;
  readonly #ctx: KafkaContext;
  readonly #req: ProduceRequest;
  readonly #correlationId: number;
  readonly #version: number;
  readonly #acks: Acks | undefined;
  readonly #topics: { name: string; partitions: ProducePartitionResponse[] }[] = [];
  #waiting = 1;
  #resolve!: (reply: Buffer | null) => void;

  constructor(
    ctx: KafkaContext,
    req: ProduceRequest,
    correlationId: number,
    version: number,
    acks: Acks | undefined,
  ) {
    this.#ctx = ctx;
    this.#req = req;
    this.#correlationId = correlationId;
    this.#version = version;
    this.#acks = acks;
    this.promise = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  start(): void {
    const ctx = this.#ctx;
    const broker = ctx.broker;
    const maxBatchBytes = broker.config.maxBatchBytes;
    const now = Date.now();
    for (const t of this.#req.topics) {
      const partitions: ProducePartitionResponse[] = [];
      this.#topics.push({ name: t.name, partitions });
      const denied = kafkaRefusal(ctx, "write", "topic", t.name);
      for (const p of t.partitions) {
        const answer: ProducePartitionResponse = {
          index: p.index,
          errorCode: KafkaErrorCode.NONE,
          baseOffset: -1,
          logAppendTimeMs: -1,
          logStartOffset: -1,
        };
        partitions.push(answer);
        const refusal = denied !== KafkaErrorCode.NONE ? denied : this.#refusal(p.records);
        if (refusal !== null) {
          answer.errorCode = refusal;
          continue;
        }
        let stored: Buffer;
        try {
          stored = ctx.batches.fromKafka(p.records!, maxBatchBytes, now);
        } catch (err) {
          this.#refused(answer, t.name, err);
          continue;
        }
        this.#waiting++;
        const append = new PartitionAppend(this, answer, t.name);
        broker.produceTo(t.name, p.index, stored, this.#acks!, append, this.#req.timeoutMs);
      }
    }
    this.done();
  }

  /** A partition's append ended (or the start loop did): answers once every one has. */
  done(): void {
    if (--this.#waiting > 0) return;
    if (this.#acks === "none") {
      this.#resolve(null);
      return;
    }
    this.#resolve(
      encodeProduceResponse(this.#correlationId, this.#version, { topics: this.#topics, throttleTimeMs: 0 }),
    );
  }

  failed(answer: ProducePartitionResponse, topic: string, err: unknown): void {
    answer.errorCode = kafkaErrorCode(err);
    this.#ctx.logger.debug({ err, topic, partition: answer.index }, "kafka produce failed");
  }

  #refused(answer: ProducePartitionResponse, topic: string, err: unknown): void {
    answer.errorCode = kafkaErrorCode(err);
    // Produce has no error message before v8: the broker's log says what was refused and why.
    this.#ctx.limitedLog(
      "kafka produce refused",
      { topic, partition: answer.index, code: answer.errorCode },
      `kafka produce refused: ${kafkaErrorMessage(err)}`,
    );
  }

  #refusal(records: Buffer | null): number | null {
    // Advertised only so that librdkafka compresses (docs/kafka.md, "Versions"): message sets v0/v1.
    if (this.#version < PRODUCE_FIRST_SERVED) return KafkaErrorCode.UNSUPPORTED_VERSION;
    if (this.#acks === undefined) return KafkaErrorCode.INVALID_REQUIRED_ACKS;
    // Transactions are not served: their markers would take offsets of their own.
    if (this.#req.transactionalId !== null) return KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    if (records === null || records.length === 0) return KafkaErrorCode.CORRUPT_MESSAGE;
    return null;
  }
}

class PartitionAppend implements AppendListener {
  readonly #reply: ProduceReply;
  readonly #answer: ProducePartitionResponse;
  readonly #topic: string;

  constructor(reply: ProduceReply, answer: ProducePartitionResponse, topic: string) {
    this.#reply = reply;
    this.#answer = answer;
    this.#topic = topic;
  }

  appended(result: AppendResult): void {
    this.#answer.baseOffset = result.baseOffset;
    this.#reply.done();
  }

  appendFailed(err: Error): void {
    this.#reply.failed(this.#answer, this.#topic, err);
    this.#reply.done();
  }
}

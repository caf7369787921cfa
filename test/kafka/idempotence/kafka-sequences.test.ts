/**
 * Idempotent Kafka produce in bare bytes: a retried batch is answered with its original base
 * offset and stored once; gaps, fenced epochs and unknown producers get the error codes librdkafka
 * and kafkajs act on (45, 47, 59); InitProducerId ids stay unique across a restart.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../../src/broker/broker.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { produceRequest, readProduceResponse, startKafka } from "../server/kafka-harness.js";

function idempotentBatch(
  producerId: number,
  producerEpoch: number,
  baseSequence: number,
  ...values: string[]
): Buffer {
  const b = new RecordBatchBuilder();
  for (const v of values) b.add(1000, null, Buffer.from(v));
  return b.finish({ baseOffset: 0, producerId, producerEpoch, baseSequence });
}

test("kafka idempotent produce: duplicates, gaps, fenced epochs and unknown producers", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("idem", 1);
  const c = await f.client();
  const sends: [Buffer, number, number][] = [
    // [batch, expected error, expected base offset (-1: any)]
    [idempotentBatch(77, 0, 0, "a", "b"), KafkaErrorCode.NONE, 0],
    [idempotentBatch(77, 0, 2, "c"), KafkaErrorCode.NONE, 2],
    [idempotentBatch(77, 0, 0, "a", "b"), KafkaErrorCode.NONE, 0], // a retry: the original's offset
    [idempotentBatch(77, 0, 2, "c"), KafkaErrorCode.NONE, 2],
    [idempotentBatch(77, 0, 5, "gap"), KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1],
    [idempotentBatch(77, 1, 0, "d"), KafkaErrorCode.NONE, 3], // a new epoch fences the old one
    [idempotentBatch(77, 0, 3, "old"), KafkaErrorCode.INVALID_PRODUCER_EPOCH, -1],
    [idempotentBatch(78, 0, 9, "lost"), KafkaErrorCode.UNKNOWN_PRODUCER_ID, -1],
  ];
  c.send(...sends.map(([batch], i) => produceRequest(i + 1, "idem", 0, batch)));
  for (const [i, [, error, base]] of sends.entries()) {
    const [[, , code, offset]] = readProduceResponse(await c.next()) as [[string, number, number, number]];
    assert.equal(code, error, `send ${i}`);
    if (base >= 0) assert.equal(offset, base, `send ${i}`);
  }
  assert.equal(f.broker.partition("idem", 0).logEndOffset, 4, "a, b, c, d: each stored once");
});

test("InitProducerId never hands out an id twice, across a restart", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-pid-"));
  try {
    const seen = new Set<number>();
    for (let round = 0; round < 3; round++) {
      const broker = await Broker.open({ dataDir, kafka: false });
      for (let i = 0; i < 5; i++) {
        const { producerId, producerEpoch } = await broker.initProducerId();
        assert.equal(producerEpoch, 0);
        assert.ok(!seen.has(producerId), `id ${producerId} handed out twice`);
        seen.add(producerId);
      }
      await broker.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

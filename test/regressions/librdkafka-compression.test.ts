/**
 * librdkafka 2.0 compresses with gzip, snappy or lz4 only when the broker's Produce range holds
 * v0 (it asks whether Produce 0..0 is supported before it compresses), so against a listener that
 * advertised Produce 3-7 kcat `-z gzip` logged "Broker does not support compression type gzip" and
 * sent its batches uncompressed. The listener now advertises Produce 0-7 and answers 0-2, which it
 * does not store, with UNSUPPORTED_VERSION for every partition, in the version's own shape.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SUPPORTED_APIS } from "../../src/kafka/protocol/api-keys.js";
import { KafkaErrorCode } from "../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { kafkaRequest, responseBody, startKafka } from "../kafka/server/kafka-harness.js";

test("the Kafka listener advertises Produce from v0, which librdkafka needs to compress", () => {
  const produce = SUPPORTED_APIS.find((api) => api.apiKey === 0);
  assert.equal(produce?.min, 0);
  assert.equal(produce?.max, 7);
});

function oldProduce(version: number, correlationId: number, acks: number): Buffer {
  const b = new RecordBatchBuilder();
  b.add(1_700_000_000_000, Buffer.from("k"), Buffer.from("v"), []);
  const records = b.finish({ baseOffset: 0 });
  return kafkaRequest(0, version, correlationId, (w) => {
    w.int16(acks);
    w.int32(5000);
    w.arrayCount(1);
    w.string("old");
    w.arrayCount(2);
    for (const p of [0, 1]) {
      w.int32(p);
      w.nullableBytes(records);
    }
  });
}

test("Produce v0, v1 and v2 are answered UNSUPPORTED_VERSION per partition, in their own shape, and store nothing", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("old", 2);
  const c = await f.client();
  // acks = 0 asks for no answer: the v0 request after it is answered first.
  c.send(oldProduce(2, 9, 0), oldProduce(0, 10, 1), oldProduce(1, 11, -1), oldProduce(2, 12, 1));
  for (const version of [0, 1, 2]) {
    const { correlationId, body: r } = responseBody(await c.next());
    assert.equal(correlationId, 10 + version);
    assert.equal(r.arrayCount(1), 1);
    assert.equal(r.string(), "old");
    assert.equal(r.arrayCount(1), 2);
    for (const p of [0, 1]) {
      assert.equal(r.int32(), p);
      assert.equal(r.int16(), KafkaErrorCode.UNSUPPORTED_VERSION);
      assert.equal(r.int64(), -1); // base offset
      if (version >= 2) assert.equal(r.int64(), -1); // log append time
    }
    if (version >= 1) assert.equal(r.int32(), 0); // throttle time
    r.done();
  }
  assert.equal(c.pending, 0);
  assert.equal(f.broker.partition("old", 0).logEndOffset, 0);
  assert.equal(f.broker.partition("old", 1).logEndOffset, 0);
});

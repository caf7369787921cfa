/**
 * The Kafka session on a live listener, with bare bytes: the handshakes real clients open with,
 * responses in request order, acks = 0, and what closes a connection without hurting others.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SUPPORTED_APIS } from "../../../src/kafka/protocol/api-keys.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { until } from "../../server/helpers.js";
import {
  kafkaRequest,
  metadataRequest,
  produceRequest,
  readProduceResponse,
  responseBody,
  startKafka,
} from "./kafka-harness.js";

/** The API keys an ApiVersions body (v0-2 layout) lists, and its error code. */
function readApiVersions(frame: Buffer, version: number): { error: number; keys: number[] } {
  const { body: r } = responseBody(frame);
  const error = r.int16();
  const n = version >= 3 ? r.compactArrayCount(6) : r.arrayCount(6);
  const keys: number[] = [];
  for (let i = 0; i < n; i++) {
    keys.push(r.int16());
    r.int16();
    r.int16();
    if (version >= 3) r.skipTaggedFields();
  }
  return { error, keys };
}

function fetchRequest(correlationId: number, topic: string, offset: number, maxWaitMs: number): Buffer {
  return kafkaRequest(1, 4, correlationId, (w) => {
    w.int32(-1);
    w.int32(maxWaitMs);
    w.int32(1);
    w.int32(1 << 20);
    w.int8(0);
    w.arrayCount(1);
    w.string(topic);
    w.arrayCount(1);
    w.int32(0);
    w.int64(offset);
    w.int32(1 << 20);
  });
}

function batchOf(...values: string[]): Buffer {
  const b = new RecordBatchBuilder();
  for (const v of values) b.add(1_700_000_000_000, Buffer.from(`k-${v}`), Buffer.from(v));
  return b.finish({ baseOffset: 0 });
}

test("kafka session: librdkafka's ApiVersions v3 (flexible header) is answered with the served ranges", async (t) => {
  const f = await startKafka(t);
  const c = await f.client();
  c.send(
    kafkaRequest(
      18,
      3,
      1,
      (w) => {
        w.compactString("confluent-kafka-python");
        w.compactString("1.7.0");
        w.emptyTaggedFields();
      },
      true,
    ),
  );
  const frame = await c.next();
  assert.equal(responseBody(frame).correlationId, 1);
  const { error, keys } = readApiVersions(frame, 3);
  assert.equal(error, KafkaErrorCode.NONE);
  // Every API the codec decodes, the group APIs included; the SASL ones only with security.
  const sasl = new Set([17, 36]);
  const expected = SUPPORTED_APIS.map((a) => a.apiKey).filter((k) => !sasl.has(k));
  assert.deepEqual(
    [...keys].sort((a, b) => a - b),
    [...expected].sort((a, b) => a - b),
  );
});

test("kafka session: an ApiVersions version above 3 gets error 35 in a v0 body, and the connection stays", async (t) => {
  const f = await startKafka(t);
  const c = await f.client();
  c.send(kafkaRequest(18, 4, 7, () => {}, true));
  const refusal = readApiVersions(await c.next(), 0);
  assert.equal(refusal.error, KafkaErrorCode.UNSUPPORTED_VERSION);
  assert.ok(refusal.keys.includes(18));
  c.send(kafkaRequest(18, 2, 8, () => {}));
  const retry = await c.next();
  assert.equal(responseBody(retry).correlationId, 8);
  assert.equal(readApiVersions(retry, 2).error, KafkaErrorCode.NONE);
});

test("kafka session: kafka-python's probe, ApiVersions v0 and a pipelined Metadata v0, answered in order", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("probe", 2);
  const c = await f.client();
  c.send(
    kafkaRequest(18, 0, 1, () => {}),
    metadataRequest(2, 0, []),
  );
  const first = await c.next();
  assert.equal(responseBody(first).correlationId, 1);
  assert.equal(readApiVersions(first, 0).error, 0);
  const second = responseBody(await c.next());
  assert.equal(second.correlationId, 2);
  const r = second.body;
  assert.equal(r.arrayCount(1), 1); // brokers
  assert.equal(r.int32(), 0); // node id
  assert.equal(r.string(), "127.0.0.1");
  assert.equal(r.int32(), f.port);
  assert.equal(r.arrayCount(1), 1); // topics
  assert.equal(r.int16(), 0);
  assert.equal(r.string(), "probe");
  assert.equal(r.arrayCount(1), 2);
});

test("kafka session: a long poll holds back the answers behind it; responses keep request order", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("slow", 1);
  const c = await f.client();
  const started = performance.now();
  // The fetch waits (nothing to read); the metadata and ApiVersions behind it complete at once.
  c.send(
    fetchRequest(10, "slow", 0, 300),
    metadataRequest(11, 1, ["slow"]),
    kafkaRequest(18, 2, 12, () => {}),
  );
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push(responseBody(await c.next()).correlationId);
  assert.deepEqual(ids, [10, 11, 12]);
  assert.ok(performance.now() - started >= 250, "the fetch waited for its max wait");
});

test("kafka session: a fetch waiting for data answers as soon as a produce arrives", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("wake", 1);
  const consumer = await f.client();
  const producer = await f.client();
  const started = performance.now();
  consumer.send(fetchRequest(1, "wake", 0, 10_000));
  // A round trip on the consumer's connection would queue behind the fetch: watch the listener.
  await until(() => f.kafka.listener.connections().some((conn) => conn.inflight === 1), "the fetch waiting");
  producer.send(produceRequest(2, "wake", 0, batchOf("a")));
  assert.deepEqual(readProduceResponse(await producer.next()), [["wake", 0, 0, 0]]);
  const fetched = await consumer.next();
  assert.equal(responseBody(fetched).correlationId, 1);
  assert.ok(performance.now() - started < 5000, "the long poll ended on the produce, not its max wait");
});

test("kafka session: acks=0 gets no response, is stored, and keeps the order of what follows", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("fire", 1);
  const c = await f.client();
  c.send(
    produceRequest(1, "fire", 0, batchOf("a", "b"), 0),
    produceRequest(2, "fire", 0, batchOf("c"), 1),
    produceRequest(3, "fire", 0, batchOf("d"), 0),
    metadataRequest(4, 1, ["fire"]),
  );
  const second = await c.next();
  assert.equal(responseBody(second).correlationId, 2);
  assert.deepEqual(readProduceResponse(second), [["fire", 0, 0, 2]]);
  assert.equal(responseBody(await c.next()).correlationId, 4);
  assert.equal(c.pending, 0);
  assert.equal(f.broker.partition("fire", 0).highWatermark, 4);
});

test("kafka session: acks other than 0, 1 and -1 are answered INVALID_REQUIRED_ACKS and store nothing", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("acks", 1);
  const c = await f.client();
  c.send(produceRequest(1, "acks", 0, batchOf("a"), 2), produceRequest(2, "acks", 0, batchOf("b"), -1));
  assert.deepEqual(readProduceResponse(await c.next()), [
    ["acks", 0, KafkaErrorCode.INVALID_REQUIRED_ACKS, -1],
  ]);
  assert.deepEqual(readProduceResponse(await c.next()), [["acks", 0, 0, 0]]);
});

test("kafka session: a malformed request closes its connection only; the broker serves the next client", async (t) => {
  const f = await startKafka(t);
  const bad = await f.client();
  // A Metadata v1 whose topic count promises more than the frame holds, after a good request.
  const good = metadataRequest(1, 1, []);
  const broken = Buffer.from(metadataRequest(2, 1, ["x"]));
  broken.writeInt32BE(1000, 4 + 2 + 2 + 4 + 2 + 4);
  bad.send(good, broken);
  assert.equal(responseBody(await bad.next()).correlationId, 1);
  await bad.closed;
  const next = await f.client();
  next.send(metadataRequest(3, 1, []));
  assert.equal(responseBody(await next.next()).correlationId, 3);
});

test("kafka session: an API not served (a group API, or an unknown key) closes the connection", async (t) => {
  const f = await startKafka(t);
  for (const apiKey of [11, 99]) {
    const c = await f.client();
    c.send(kafkaRequest(apiKey, 0, 1, (w) => w.string("g")));
    await c.closed;
    assert.equal(c.pending, 0);
  }
});

test("kafka session: a frame shorter than a request header closes the connection", async (t) => {
  const f = await startKafka(t);
  const c = await f.client();
  c.send(Buffer.from([0, 0, 0, 3, 0, 18, 0]));
  await c.closed;
});

test("kafka session: a connection over the broker's connection limit is closed unanswered; the others go on", async (t) => {
  const f = await startKafka(t, { maxConnections: 1 });
  const first = await f.client();
  first.send(kafkaRequest(18, 0, 1, () => {}));
  assert.equal(responseBody(await first.next()).correlationId, 1);
  const over = await f.client();
  over.send(kafkaRequest(18, 0, 2, () => {}));
  await over.closed;
  assert.equal(over.pending, 0);
  first.send(kafkaRequest(18, 0, 3, () => {}));
  assert.equal(responseBody(await first.next()).correlationId, 3);
});

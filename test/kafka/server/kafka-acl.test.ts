/**
 * ACLs on the Kafka listener (docs/kafka.md "Authorization"): with --authorization on, a produce or
 * fetch of a topic the principal may not write or read is answered TOPIC_AUTHORIZATION_FAILED for
 * that topic, and one it may goes through; kafkajs and bare requests after a SCRAM login.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import type { AclRule } from "../../../src/security/acl-rule.js";
import {
  kafkaRequest,
  metadataRequest,
  produceRequest,
  type RawKafkaClient,
  readProduceResponse,
  responseBody,
} from "./kafka-harness.js";
import { aliceKafka, login, startSecureKafka, USERS } from "./kafka-secure-harness.js";
import { TestClients } from "./test-clients.js";

const allow = (operation: AclRule["operation"], name: string): AclRule => ({
  principal: "User:alice",
  permission: "allow",
  operation,
  resourceType: "topic",
  patternType: "literal",
  name,
});

async function secured(t: Parameters<typeof startSecureKafka>[0]) {
  const f = await startSecureKafka(t, { authentication: "required", authorization: "on" });
  await f.broker.createTopic("open", 1);
  await f.broker.createTopic("closed", 1);
  await f.security.addAcls([allow("write", "open"), allow("read", "open"), allow("describe", "open")]);
  return f;
}

/** A Fetch v4 of partition 0 of each topic from offset 0: the error code per topic. */
async function fetchErrors(c: RawKafkaClient, topics: string[]): Promise<Map<string, number>> {
  c.send(
    kafkaRequest(1, 4, 7, (w) => {
      w.int32(-1);
      w.int32(0);
      w.int32(0);
      w.int32(1 << 20);
      w.int8(0);
      w.arrayCount(topics.length);
      for (const topic of topics) {
        w.string(topic);
        w.arrayCount(1);
        w.int32(0);
        w.int64(0);
        w.int32(1 << 20);
      }
    }),
  );
  const { body } = responseBody(await c.next());
  body.int32();
  const out = new Map<string, number>();
  for (let n = body.arrayCount(1); n > 0; n--) {
    const name = body.string();
    assert.equal(body.arrayCount(1), 1);
    body.int32();
    out.set(name, body.int16());
    body.int64();
    body.int64();
    for (let a = body.nullableArrayCount(1); a > 0; a--) body.skip(16);
    body.nullableBytes();
  }
  return out;
}

test("kafka ACLs: produce is refused TOPIC_AUTHORIZATION_FAILED without write, allowed with it", async (t) => {
  const f = await secured(t);
  const c = await f.raw();
  await login(c, "alice", USERS.alice);
  const batch = new RecordBatchBuilder();
  batch.add(1_700_000_000_000, null, Buffer.from("v"));
  const records = batch.finish({ baseOffset: 0 });
  c.send(produceRequest(1, "open", 0, records), produceRequest(2, "closed", 0, records));
  assert.deepEqual(readProduceResponse(await c.next()), [["open", 0, KafkaErrorCode.NONE, 0]]);
  assert.deepEqual(readProduceResponse(await c.next()), [
    ["closed", 0, KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED, -1],
  ]);
  assert.equal(f.broker.partition("closed", 0).highWatermark, 0, "nothing stored in the refused topic");
});

test("kafka ACLs: fetch is refused TOPIC_AUTHORIZATION_FAILED without read, per topic", async (t) => {
  const f = await secured(t);
  const c = await f.raw();
  await login(c, "alice", USERS.alice);
  const errors = await fetchErrors(c, ["open", "closed"]);
  assert.equal(errors.get("open"), KafkaErrorCode.NONE);
  assert.equal(errors.get("closed"), KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED);
});

test("kafka ACLs: kafkajs produces to an allowed topic and is refused on another", async (t) => {
  const clients = new TestClients(t);
  const f = await secured(t);
  const kafka = aliceKafka(clients, f.bootstrap);
  const producer = kafka.producer();
  await producer.connect();
  const [ok] = await producer.send({ topic: "open", messages: [{ value: "yes" }] });
  assert.equal(ok?.errorCode, 0);
  await assert.rejects(producer.send({ topic: "closed", messages: [{ value: "no" }] }), (err: Error) => {
    assert.match(`${err.name} ${err.message}`, /authoriz/i);
    return true;
  });
});

/** A Metadata v1 response: each topic's error code, by name, in order. */
function metadataTopics(frame: Buffer): [string, number][] {
  const { body } = responseBody(frame);
  for (let n = body.arrayCount(1); n > 0; n--) {
    body.int32();
    body.string();
    body.int32();
    body.nullableString();
  }
  body.int32();
  const out: [string, number][] = [];
  for (let n = body.arrayCount(1); n > 0; n--) {
    const error = body.int16();
    out.push([body.string(), error]);
    body.boolean();
    for (let p = body.arrayCount(1); p > 0; p--) {
      body.skip(2 + 4 + 4);
      body.skip(4 * body.arrayCount(4));
      body.skip(4 * body.arrayCount(4));
    }
  }
  return out;
}

test("kafka ACLs: metadata leaves out topics the principal may not describe, and refuses them by name", async (t) => {
  const f = await secured(t);
  const c = await f.raw();
  await login(c, "alice", USERS.alice);
  c.send(kafkaRequest(3, 1, 1, (w) => w.int32(-1))); // v1: a null array asks for every topic
  assert.deepEqual(metadataTopics(await c.next()), [["open", KafkaErrorCode.NONE]]);
  c.send(metadataRequest(2, 1, ["open", "closed"]));
  assert.deepEqual(metadataTopics(await c.next()), [
    ["open", KafkaErrorCode.NONE],
    ["closed", KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED],
  ]);
});

test("kafka ACLs: kafkajs admin is refused creating and deleting topics without create and delete", async (t) => {
  const clients = new TestClients(t);
  const f = await secured(t);
  const kafka = aliceKafka(clients, f.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  // kafkajs reports per-topic errors as a list, or as the error's own type.
  const refused = (err: { type?: string; errors?: { type?: string }[] }): boolean =>
    (err.errors?.[0]?.type ?? err.type) === "TOPIC_AUTHORIZATION_FAILED";
  await assert.rejects(admin.createTopics({ topics: [{ topic: "new-one" }] }), refused);
  await assert.rejects(admin.deleteTopics({ topics: ["open"] }), refused);
  assert.ok(f.broker.listTopics().includes("open"));
  assert.ok(!f.broker.listTopics().includes("new-one"));
});

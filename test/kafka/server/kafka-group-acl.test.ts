/**
 * Group ACLs on the Kafka listener (docs/kafka.md "Authorization"): with --authorization on, each
 * group API is allowed with the operation Kafka asks for (read on the group for JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup and OffsetCommit, with read on each topic committed; describe
 * for FindCoordinator, OffsetFetch (and describe on each topic) and DescribeGroups) and refused
 * GROUP_AUTHORIZATION_FAILED / TOPIC_AUTHORIZATION_FAILED without it; ListGroups shows only the
 * groups the principal may describe, all of them with describe on the cluster. Bare requests after
 * a SCRAM login for each operation, then kafkajs and confluent-kafka end to end.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import type { AclRule } from "../../../src/security/acl-rule.js";
import {
  hasPythonModule,
  kafkaRequest,
  PYTHON,
  produceRequest,
  type RawKafkaClient,
  responseBody,
  runTool,
} from "./kafka-harness.js";
import { aliceKafka, login, startSecureKafka, USERS } from "./kafka-secure-harness.js";
import { TestClients } from "./test-clients.js";

const { NONE, GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED } = KafkaErrorCode;

const rule = (
  operation: AclRule["operation"],
  resourceType: AclRule["resourceType"],
  name: string,
): AclRule => ({
  principal: "User:alice",
  permission: "allow",
  operation,
  resourceType,
  patternType: "literal",
  name,
});

/** alice may read (so describe) group "open-g" and topic "open"; nothing of "closed-g" or "closed". */
async function secured(t: TestContext) {
  const f = await startSecureKafka(t, { authentication: "required", authorization: "on" });
  await f.broker.createTopic("open", 1);
  await f.broker.createTopic("closed", 1);
  await f.security.addAcls([
    rule("read", "topic", "open"),
    rule("write", "topic", "open"),
    rule("read", "group", "open-g"),
  ]);
  const c = await f.raw();
  await login(c, "alice", USERS.alice);
  return { f, c };
}

/** Sends one request and returns its response body after the correlation id. */
async function ask(c: RawKafkaClient, frame: Buffer) {
  c.send(frame);
  return responseBody(await c.next()).body;
}

const findCoordinator = (group: string) =>
  kafkaRequest(10, 1, 1, (w) => {
    w.string(group);
    w.int8(0);
  });

const joinGroup = (group: string) =>
  kafkaRequest(11, 5, 2, (w) => {
    w.string(group);
    w.int32(10_000);
    w.int32(10_000);
    w.string("");
    w.nullableString(null);
    w.string("consumer");
    w.arrayCount(1);
    w.string("range");
    w.bytes(Buffer.alloc(0));
  });

const syncGroup = (group: string) =>
  kafkaRequest(14, 3, 3, (w) => {
    w.string(group);
    w.int32(1);
    w.string("nobody");
    w.nullableString(null);
    w.arrayCount(0);
  });

const heartbeat = (group: string) =>
  kafkaRequest(12, 3, 4, (w) => {
    w.string(group);
    w.int32(1);
    w.string("nobody");
    w.nullableString(null);
  });

const leaveGroup = (group: string) =>
  kafkaRequest(13, 3, 5, (w) => {
    w.string(group);
    w.arrayCount(1);
    w.string("nobody");
    w.nullableString(null);
  });

/** OffsetCommit v7 from outside the membership: offset 5 of partition 0 of each topic. */
const offsetCommit = (group: string, topics: string[]) =>
  kafkaRequest(8, 7, 6, (w) => {
    w.string(group);
    w.int32(-1);
    w.string("");
    w.nullableString(null);
    w.arrayCount(topics.length);
    for (const topic of topics) {
      w.string(topic);
      w.arrayCount(1);
      w.int32(0);
      w.int64(5);
      w.int32(-1);
      w.nullableString(null);
    }
  });

/** Each topic's partition 0 error of an OffsetCommit v3+ response. */
async function commitErrors(c: RawKafkaClient, frame: Buffer): Promise<Record<string, number>> {
  const body = await ask(c, frame);
  body.int32();
  const out: Record<string, number> = {};
  for (let n = body.arrayCount(1); n > 0; n--) {
    const name = body.string();
    assert.equal(body.arrayCount(1), 1);
    body.int32();
    out[name] = body.int16();
  }
  return out;
}

/** OffsetFetch v5 of partition 0 of each topic (null: every committed partition). */
async function fetchOffsets(c: RawKafkaClient, group: string, topics: string[] | null) {
  const body = await ask(
    c,
    kafkaRequest(9, 5, 7, (w) => {
      w.string(group);
      if (topics === null) w.int32(-1);
      else {
        w.arrayCount(topics.length);
        for (const topic of topics) {
          w.string(topic);
          w.arrayCount(1);
          w.int32(0);
        }
      }
    }),
  );
  body.int32();
  const partitions: Record<string, [offset: number, error: number]> = {};
  for (let n = body.arrayCount(1); n > 0; n--) {
    const name = body.string();
    for (let p = body.arrayCount(1); p > 0; p--) {
      body.int32();
      const offset = Number(body.int64());
      body.int32();
      body.nullableString();
      partitions[name] = [offset, body.int16()];
    }
  }
  return { partitions, error: body.int16() };
}

/** DescribeGroups v0: each group's error code. */
async function describeErrors(c: RawKafkaClient, groups: string[]): Promise<Record<string, number>> {
  const body = await ask(
    c,
    kafkaRequest(15, 0, 8, (w) => {
      w.arrayCount(groups.length);
      for (const g of groups) w.string(g);
    }),
  );
  const out: Record<string, number> = {};
  for (let n = body.arrayCount(1); n > 0; n--) {
    const error = body.int16();
    const id = body.string();
    out[id] = error;
    body.string();
    body.string();
    body.string();
    assert.equal(body.arrayCount(1), 0);
  }
  return out;
}

/** ListGroups v0: the group ids listed. */
async function listGroups(c: RawKafkaClient): Promise<string[]> {
  const body = await ask(
    c,
    kafkaRequest(16, 0, 9, () => {}),
  );
  assert.equal(body.int16(), NONE);
  const ids: string[] = [];
  for (let n = body.arrayCount(1); n > 0; n--) {
    ids.push(body.string());
    body.string();
  }
  return ids.sort();
}

/** The error code after a throttle time, as FindCoordinator, JoinGroup, SyncGroup, Heartbeat and LeaveGroup v1+ answer. */
async function errorAfterThrottle(c: RawKafkaClient, frame: Buffer): Promise<number> {
  const body = await ask(c, frame);
  body.int32();
  return body.int16();
}

test("kafka group ACLs: FindCoordinator needs describe on the group", async (t) => {
  const { c } = await secured(t);
  assert.equal(await errorAfterThrottle(c, findCoordinator("open-g")), NONE);
  assert.equal(await errorAfterThrottle(c, findCoordinator("closed-g")), GROUP_AUTHORIZATION_FAILED);
});

test("kafka group ACLs: JoinGroup, SyncGroup, Heartbeat and LeaveGroup need read on the group", async (t) => {
  const { f, c } = await secured(t);
  // Allowed: past the check, the coordinator answers (a new member is told its id; "nobody" is unknown).
  assert.equal(await errorAfterThrottle(c, joinGroup("open-g")), KafkaErrorCode.MEMBER_ID_REQUIRED);
  assert.equal(await errorAfterThrottle(c, syncGroup("open-g")), KafkaErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await errorAfterThrottle(c, heartbeat("open-g")), KafkaErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await errorAfterThrottle(c, leaveGroup("open-g")), NONE);
  for (const frame of [joinGroup, syncGroup, heartbeat, leaveGroup]) {
    assert.equal(await errorAfterThrottle(c, frame("closed-g")), GROUP_AUTHORIZATION_FAILED);
  }
  assert.ok(
    !f.broker.groups.listGroups().some((g) => g.group === "closed-g"),
    "a refused join leaves no group behind",
  );
});

test("kafka group ACLs: OffsetCommit needs read on the group and on each topic", async (t) => {
  const { f, c } = await secured(t);
  assert.deepEqual(await commitErrors(c, offsetCommit("open-g", ["open", "closed"])), {
    open: NONE,
    closed: TOPIC_AUTHORIZATION_FAILED,
  });
  assert.deepEqual(await commitErrors(c, offsetCommit("closed-g", ["open"])), {
    open: GROUP_AUTHORIZATION_FAILED,
  });
  const stored = (group: string) =>
    f.broker.groups.fetchOffsets(group, [
      { topic: "open", partition: 0 },
      { topic: "closed", partition: 0 },
    ]);
  assert.deepEqual(
    stored("open-g").map((e) => e.offset),
    [5, -1],
    "the allowed topic committed, the refused one not",
  );
  assert.deepEqual(
    stored("closed-g").map((e) => e.offset),
    [-1, -1],
  );
});

test("kafka group ACLs: OffsetFetch needs describe on the group and on each topic", async (t) => {
  const { f, c } = await secured(t);
  await f.broker.groups.commit("open-g", "", 0, [
    { topic: "open", partition: 0, offset: 3 },
    { topic: "closed", partition: 0, offset: 4 },
  ]);
  assert.deepEqual(await fetchOffsets(c, "open-g", ["open", "closed"]), {
    partitions: { open: [3, NONE], closed: [-1, TOPIC_AUTHORIZATION_FAILED] },
    error: NONE,
  });
  // Every committed partition: the topic alice may not describe is left out.
  assert.deepEqual(await fetchOffsets(c, "open-g", null), { partitions: { open: [3, NONE] }, error: NONE });
  const refused = await fetchOffsets(c, "closed-g", ["open"]);
  assert.equal(refused.error, GROUP_AUTHORIZATION_FAILED);
  assert.deepEqual(refused.partitions, { open: [-1, GROUP_AUTHORIZATION_FAILED] });
});

test("kafka group ACLs: DescribeGroups needs describe per group; ListGroups shows what may be described", async (t) => {
  const { f, c } = await secured(t);
  for (const group of ["open-g", "closed-g", "other-g"]) {
    await f.broker.groups.commit(group, "", 0, [{ topic: "open", partition: 0, offset: 1 }]);
  }
  assert.deepEqual(await describeErrors(c, ["open-g", "closed-g"]), {
    "open-g": NONE,
    "closed-g": GROUP_AUTHORIZATION_FAILED,
  });
  assert.deepEqual(await listGroups(c), ["open-g"]);
  await f.security.addAcls([rule("describe", "cluster", "cluster")]);
  assert.deepEqual(await listGroups(c), ["closed-g", "open-g", "other-g"]);
});

test("kafka group ACLs: a kafkajs consumer group runs with read on its group and is refused another", async (t) => {
  const clients = new TestClients(t);
  const { f } = await secured(t);
  const kafka = aliceKafka(clients, f.bootstrap);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: "open", messages: [{ value: "a" }, { value: "b" }] });

  const consumer = kafka.consumer({ groupId: "open-g", maxWaitTimeInMs: 100, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic: "open", fromBeginning: true });
  const values: string[] = [];
  const committed = new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
    consumer.on(consumer.events.COMMIT_OFFSETS, () => {
      if (values.length === 2) resolve();
    });
  });
  await consumer.run({
    autoCommitThreshold: 1,
    eachMessage: async ({ message }) => {
      values.push(String(message.value));
    },
  });
  await committed;
  assert.deepEqual(values, ["a", "b"]);
  assert.deepEqual(
    f.broker.groups.fetchOffsets("open-g", [{ topic: "open", partition: 0 }]).map((e) => e.offset),
    [2],
  );

  const admin = kafka.admin();
  await admin.connect();
  // kafkajs turns a refused FindCoordinator into "no coordinator" (it drops the code): refused all the same.
  await assert.rejects(admin.fetchOffsets({ groupId: "closed-g", topics: ["open"] }));
  const listed = await admin.listGroups();
  assert.deepEqual(
    listed.groups.map((g) => g.groupId),
    ["open-g"],
  );
  const refusedConsumer = kafka.consumer({ groupId: "closed-g" });
  await refusedConsumer.connect();
  await refusedConsumer.subscribe({ topic: "open" });
  const crashed = new Promise<unknown>((resolve) => {
    refusedConsumer.on(refusedConsumer.events.CRASH, (e) => resolve(e.payload.error));
  });
  await refusedConsumer.run({ eachMessage: async () => {} });
  const err = (await crashed) as Error;
  assert.equal(err.name, "KafkaJSGroupCoordinatorNotFound");
  assert.ok(!f.broker.groups.listGroups().some((g) => g.group === "closed-g"));
});

/** One batch holding one record of `value`. */
function records(value: string): Buffer {
  const b = new RecordBatchBuilder();
  b.add(1_700_000_000_000, null, Buffer.from(value));
  return b.finish({ baseOffset: 0 });
}

/** A confluent-kafka consumer of topic "open" in `group`: prints the first message's value or error name. */
function confluentConsumer(bootstrap: string, group: string): string {
  const settings = {
    "bootstrap.servers": bootstrap,
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanisms": "SCRAM-SHA-256",
    "sasl.username": "alice",
    "sasl.password": USERS.alice,
    "group.id": group,
    "auto.offset.reset": "earliest",
  };
  return `
import json, time
from confluent_kafka import Consumer
c = Consumer(json.loads(${JSON.stringify(JSON.stringify(settings))}))
c.subscribe(["open"])
deadline = time.time() + 20
out = "nothing"
while time.time() < deadline:
    m = c.poll(0.5)
    if m is None:
        continue
    out = m.error().name() if m.error() else "message " + m.value().decode()
    break
print(out)
c.close()
`;
}

test("kafka group ACLs: confluent-kafka consumes in a group it may read and is told GROUP_AUTHORIZATION_FAILED in another", async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const { f, c } = await secured(t);
  c.send(produceRequest(1, "open", 0, records("hello")));
  await c.next();
  const allowed = await runTool(PYTHON, ["-c", confluentConsumer(f.bootstrap, "open-g")]);
  assert.equal(allowed.stdout.toString().trim(), "message hello", allowed.stderr);
  const refused = await runTool(PYTHON, ["-c", confluentConsumer(f.bootstrap, "closed-g")]);
  assert.equal(refused.stdout.toString().trim(), "GROUP_AUTHORIZATION_FAILED", refused.stderr);
});

/**
 * The Kafka group handlers against a real broker's coordinator: requests as real clients sent them
 * (the golden fixtures) or built with the codec's writer, responses decoded field by field. The
 * end-to-end tests with real clients need the Kafka listener; these drive the handlers directly.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { ApiKey } from "../../src/kafka/protocol/api-keys.js";
import { KafkaErrorCode } from "../../src/kafka/protocol/error-codes.js";
import { decodeRequestHeader } from "../../src/kafka/protocol/frame.js";
import { KafkaReader } from "../../src/kafka/protocol/kafka-reader.js";
import { type KafkaSink, KafkaSizer, KafkaWriter } from "../../src/kafka/protocol/kafka-writer.js";
import { KAFKA_GROUP_HANDLERS, type KafkaGroupContext } from "../../src/kafka/server/groups/index.js";
import { openBroker } from "../groups/helpers.js";
import { parseKafkaFixtures } from "./fixtures/fixture-format.js";
import * as joinFixtures from "./fixtures/join-group.js";

const joins = parseKafkaFixtures(joinFixtures.TEXT);

async function setup(t: TestContext) {
  const broker = await openBroker(t);
  await broker.createTopic("t1", 2);
  const ac = new AbortController();
  t.after(() => ac.abort());
  const ctx: KafkaGroupContext = {
    broker,
    node: { nodeId: 1, host: "127.0.0.1", port: 9092 },
    signal: ac.signal,
    auth: null,
    authorization: null,
  };
  const call = async (frame: Buffer): Promise<KafkaReader> => {
    const h = decodeRequestHeader(frame);
    const handler = KAFKA_GROUP_HANDLERS.get(h.apiKey);
    assert.ok(handler, `a handler for api ${h.apiKey}`);
    const res = await handler(ctx, h);
    const r = new KafkaReader(res);
    assert.equal(r.int32(), res.length - 4);
    assert.equal(r.int32(), h.correlationId);
    return r;
  };
  return { broker, call };
}

/** A request frame (header v1) with a body written by `body`. */
function request(apiKey: number, version: number, body: (w: KafkaSink) => void): Buffer {
  const sizer = new KafkaSizer();
  body(sizer);
  const size = 2 + 2 + 4 + 2 + 4 + sizer.size;
  const w = new KafkaWriter(4 + size);
  w.int32(size);
  w.int16(apiKey);
  w.int16(version);
  w.int32(77);
  w.nullableString("test");
  body(w);
  return w.finish();
}

test("JoinGroup v5 as librdkafka sends it: MEMBER_ID_REQUIRED with an id, then joined as leader with the metadata", async (t) => {
  const { call } = await setup(t);
  const frame = joins.get("join-group-v5-librdkafka-request")!;
  let r = await call(frame);
  r.int32(); // throttle
  assert.equal(r.int16(), KafkaErrorCode.MEMBER_ID_REQUIRED);
  assert.equal(r.int32(), -1);
  r.string();
  r.string();
  const memberId = r.string();
  assert.match(memberId, /^rdkafka-/);

  // The same request with the member id filled in (group "g1", as the fixture).
  const again = request(ApiKey.JOIN_GROUP, 5, (w) => {
    w.string("g1");
    w.int32(6000);
    w.int32(300000);
    w.string(memberId);
    w.nullableString(null);
    w.string("consumer");
    w.arrayCount(1);
    w.string("range");
    w.bytes(Buffer.from("000100000001000274310000000000000000", "hex"));
  });
  r = await call(again);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.int32(), 1, "generation");
  assert.equal(r.string(), "range");
  assert.equal(r.string(), memberId, "leader");
  assert.equal(r.string(), memberId);
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.string(), memberId);
  assert.equal(r.nullableString(), null);
  assert.equal(r.bytes().toString("hex"), "000100000001000274310000000000000000");
  r.done();

  // SyncGroup v3 from the leader, then a heartbeat v3, an OffsetCommit v7, an OffsetFetch v5.
  const assignment = Buffer.from("0001000000010002743100000001000000000000ffffffff".replace(/ /g, ""), "hex");
  r = await call(
    request(ApiKey.SYNC_GROUP, 3, (w) => {
      w.string("g1");
      w.int32(1);
      w.string(memberId);
      w.nullableString(null);
      w.arrayCount(1);
      w.string(memberId);
      w.bytes(assignment);
    }),
  );
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.deepEqual(r.bytes(), assignment);
  r = await call(
    request(ApiKey.HEARTBEAT, 3, (w) => {
      w.string("g1");
      w.int32(1);
      w.string(memberId);
      w.nullableString(null);
    }),
  );
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  const commit = (generation: number, member: string) =>
    request(ApiKey.OFFSET_COMMIT, 7, (w) => {
      w.string("g1");
      w.int32(generation);
      w.string(member);
      w.nullableString(null);
      w.arrayCount(1);
      w.string("t1");
      w.arrayCount(1);
      w.int32(0);
      w.int64(3);
      w.int32(-1);
      w.nullableString("");
    });
  r = await call(commit(1, memberId));
  r.int32();
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.string(), "t1");
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.int32(), 0);
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  r = await call(commit(0, memberId));
  r.int32();
  r.arrayCount(6);
  r.string();
  r.arrayCount(6);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.ILLEGAL_GENERATION);
  r = await call(commit(-1, ""));
  r.int32();
  r.arrayCount(6);
  r.string();
  r.arrayCount(6);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NON_EMPTY_GROUP, "a standalone commit to a live group is refused");

  // OffsetFetch v5 with a null topic array: every committed partition.
  r = await call(
    request(ApiKey.OFFSET_FETCH, 5, (w) => {
      w.string("g1");
      w.int32(-1);
    }),
  );
  r.int32();
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.string(), "t1");
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.int32(), 0);
  assert.equal(r.int64(), 3);
  assert.equal(r.int32(), -1);
  assert.equal(r.nullableString(), "");
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  r.done();

  // DescribeGroups v4 and ListGroups v2 show the Kafka group.
  r = await call(
    request(ApiKey.DESCRIBE_GROUPS, 4, (w) => {
      w.arrayCount(2);
      w.string("g1");
      w.string("nope");
      w.boolean(false);
    }),
  );
  r.int32();
  assert.equal(r.arrayCount(2), 2);
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.string(), "g1");
  assert.equal(r.string(), "Stable");
  assert.equal(r.string(), "consumer");
  assert.equal(r.string(), "range");
  assert.equal(r.arrayCount(6), 1);
  assert.equal(r.string(), memberId);
  assert.equal(r.nullableString(), null);
  assert.equal(r.string(), "test");
  r.string();
  assert.equal(r.bytes().toString("hex"), "000100000001000274310000000000000000");
  assert.deepEqual(r.bytes(), assignment);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.string(), "nope");
  assert.equal(r.string(), "Dead");

  r = await call(request(ApiKey.LIST_GROUPS, 2, () => {}));
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.arrayCount(4), 1);
  assert.equal(r.string(), "g1");
  assert.equal(r.string(), "consumer");

  // LeaveGroup v3 (kafkajs's) answers per member.
  r = await call(
    request(ApiKey.LEAVE_GROUP, 3, (w) => {
      w.string("g1");
      w.arrayCount(2);
      w.string(memberId);
      w.nullableString(null);
      w.string("stranger");
      w.nullableString(null);
    }),
  );
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.arrayCount(4), 2);
  assert.equal(r.string(), memberId);
  r.nullableString();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.string(), "stranger");
  r.nullableString();
  assert.equal(r.int16(), KafkaErrorCode.UNKNOWN_MEMBER_ID);
});

test("JoinGroup v2 as kafka-python sends it joins at once (no member id round trip)", async (t) => {
  const { call } = await setup(t);
  const r = await call(joins.get("join-group-v2-kafka-python-request")!);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.int32(), 1);
  assert.equal(r.string(), "range", "the first protocol kafka-python prefers");
  const leader = r.string();
  assert.match(leader, /^kafka-python-2\.0\.2-/);
  assert.equal(r.string(), leader);
});

test("a Kafka join to a native group answers INCONSISTENT_GROUP_PROTOCOL; FindCoordinator names this broker", async (t) => {
  const { broker, call } = await setup(t);
  await broker.groups.join({
    group: "g1",
    memberId: "",
    clientId: "conch",
    topics: ["t1"],
    strategy: "range",
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
  });
  let r = await call(joins.get("join-group-v5-kafkajs-request")!);
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL);

  r = await call(
    request(ApiKey.FIND_COORDINATOR, 1, (w) => {
      w.string("g1");
      w.int8(0);
    }),
  );
  r.int32();
  assert.equal(r.int16(), KafkaErrorCode.NONE);
  assert.equal(r.nullableString(), null);
  assert.equal(r.int32(), 1);
  assert.equal(r.string(), "127.0.0.1");
  assert.equal(r.int32(), 9092);
});

/**
 * What the decoders make of the cases the golden fixtures do not show: nulls that mean "all",
 * fields absent from older versions, and values a broker must refuse rather than the codec.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import * as k from "../../src/kafka/protocol/index.js";

/** A request frame (header v1, client id "t") whose body `write` describes. */
function request(apiKey: number, version: number, write: (w: k.KafkaSink) => void): k.KafkaRequestHeader {
  const head = (w: k.KafkaSink): void => {
    w.int16(apiKey);
    w.int16(version);
    w.int32(7);
    w.nullableString("t");
    write(w);
  };
  const sizer = new k.KafkaSizer();
  head(sizer);
  const w = new k.KafkaWriter(4 + sizer.size);
  w.int32(sizer.size);
  head(w);
  return k.decodeRequestHeader(w.finish());
}

const malformed = (e: unknown) => e instanceof ConchError && e.code === ErrorCode.MALFORMED_REQUEST;

test("kafka decoders: Metadata's empty and null topic lists mean what each version says", () => {
  const v0Empty = request(3, 0, (w) => w.arrayCount(0));
  assert.deepEqual(k.decodeMetadataRequest(v0Empty), { topics: null, allowAutoTopicCreation: true });
  const v1Empty = request(3, 1, (w) => w.arrayCount(0));
  assert.deepEqual(k.decodeMetadataRequest(v1Empty), { topics: [], allowAutoTopicCreation: true });
  const v1Null = request(3, 1, (w) => w.arrayCount(-1));
  assert.deepEqual(k.decodeMetadataRequest(v1Null).topics, null);
  assert.throws(() => k.decodeMetadataRequest(request(3, 0, (w) => w.arrayCount(-1))), malformed);
  const v4 = request(3, 4, (w) => {
    w.arrayCount(1);
    w.string("a");
    w.boolean(false);
  });
  assert.deepEqual(k.decodeMetadataRequest(v4), { topics: ["a"], allowAutoTopicCreation: false });
});

test("kafka decoders: OffsetFetch's null topics mean every partition from v2 on, and are malformed before", () => {
  const v2 = request(9, 2, (w) => {
    w.string("g");
    w.arrayCount(-1);
  });
  assert.deepEqual(k.decodeOffsetFetchRequest(v2), { groupId: "g", topics: null });
  const v1 = request(9, 1, (w) => {
    w.string("g");
    w.arrayCount(-1);
  });
  assert.throws(() => k.decodeOffsetFetchRequest(v1), malformed);
});

test("kafka decoders: LeaveGroup gives every version as a list of members", () => {
  const v1 = request(13, 1, (w) => {
    w.string("g");
    w.string("m1");
  });
  assert.deepEqual(k.decodeLeaveGroupRequest(v1), {
    groupId: "g",
    members: [{ memberId: "m1", groupInstanceId: null }],
  });
  const v3 = request(13, 3, (w) => {
    w.string("g");
    w.arrayCount(2);
    w.string("m1");
    w.nullableString(null);
    w.string("m2");
    w.nullableString("i2");
  });
  assert.deepEqual(k.decodeLeaveGroupRequest(v3).members, [
    { memberId: "m1", groupInstanceId: null },
    { memberId: "m2", groupInstanceId: "i2" },
  ]);
});

test("kafka decoders: JoinGroup v0 has no rebalance timeout and takes the session timeout for it", () => {
  const v0 = request(11, 0, (w) => {
    w.string("g");
    w.int32(10_000);
    w.string("");
    w.string("consumer");
    w.arrayCount(1);
    w.string("range");
    w.bytes(Buffer.from([1, 2]));
  });
  const req = k.decodeJoinGroupRequest(v0);
  assert.equal(req.rebalanceTimeoutMs, 10_000);
  assert.deepEqual(req.protocols, [{ name: "range", metadata: Buffer.from([1, 2]) }]);
});

test("kafka decoders: Produce passes any acks on for the broker to answer INVALID_REQUIRED_ACKS", () => {
  const produce = request(0, 3, (w) => {
    w.nullableString(null);
    w.int16(2);
    w.int32(1000);
    w.arrayCount(1);
    w.string("t");
    w.arrayCount(1);
    w.int32(0);
    w.nullableBytes(null);
  });
  const req = k.decodeProduceRequest(produce);
  assert.equal(req.acks, 2);
  assert.deepEqual(req.topics, [{ name: "t", partitions: [{ index: 0, records: null }] }]);
});

test("kafka decoders: Fetch fields absent from a version get their Kafka defaults", () => {
  /** replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level */
  const head = (w: k.KafkaSink, isolationLevel: number): void => {
    for (const v of [-1, 500, 1, 1 << 20]) w.int32(v);
    w.int8(isolationLevel);
  };
  const v4 = request(1, 4, (w) => {
    head(w, 0);
    w.arrayCount(1);
    w.string("t");
    w.arrayCount(1);
    w.int32(2);
    w.int64(42);
    w.int32(1 << 16);
  });
  const req = k.decodeFetchRequest(v4);
  assert.deepEqual([req.sessionId, req.sessionEpoch, req.forgottenTopics, req.rackId], [0, -1, [], ""]);
  assert.deepEqual(req.topics[0]?.partitions[0], {
    partition: 2,
    currentLeaderEpoch: -1,
    fetchOffset: 42,
    logStartOffset: -1,
    partitionMaxBytes: 1 << 16,
  });
  const badIsolation = request(1, 4, (w) => {
    head(w, 2);
    w.arrayCount(0);
  });
  assert.throws(() => k.decodeFetchRequest(badIsolation), malformed);
});

test("kafka decoders: a decoder handed another API's header refuses it", () => {
  const h = request(12, 0, (w) => {
    w.string("g");
    w.int32(1);
    w.string("m");
  });
  assert.deepEqual(k.decodeHeartbeatRequest(h), {
    groupId: "g",
    generationId: 1,
    memberId: "m",
    groupInstanceId: null,
  });
  const again = request(12, 0, () => {});
  assert.throws(
    () => k.decodeSyncGroupRequest(again),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.UNSUPPORTED_VERSION,
  );
});

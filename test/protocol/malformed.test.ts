/** Decoders refuse short, long or inconsistent bytes with ConchError; encoders refuse values that do not fit. */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/index.js";
import * as p from "../../src/protocol/index.js";
import { FIXTURE_TEXT, parseFixtures } from "./fixtures.js";

const fixtures = parseFixtures(FIXTURE_TEXT);

const decoders: Record<string, (frame: Buffer) => unknown> = {
  "handshake-request": p.decodeHandshakeRequest,
  "handshake-response": p.decodeHandshakeResponse,
  "create-topic-request": p.decodeCreateTopicRequest,
  "create-topic-response": p.decodeCreateTopicResponse,
  "delete-topic-request": p.decodeDeleteTopicRequest,
  "delete-topic-response": p.decodeDeleteTopicResponse,
  "list-topics-request": p.decodeListTopicsRequest,
  "list-topics-response": p.decodeListTopicsResponse,
  "init-producer-id-request": p.decodeInitProducerIdRequest,
  "init-producer-id-response": p.decodeInitProducerIdResponse,
  "describe-topic-request": p.decodeDescribeTopicRequest,
  "describe-topic-response": p.decodeDescribeTopicResponse,
  "describe-topic-v2-request": p.decodeDescribeTopicRequest,
  "describe-topic-v2-response": p.decodeDescribeTopicResponseV2,
  "describe-topic-v3-request": p.decodeDescribeTopicRequestV3,
  "describe-topic-v3-response": p.decodeDescribeTopicResponseV3,
  "produce-request": p.decodeProduceRequest,
  "produce-response": p.decodeProduceResponse,
  "produce-v2-request": p.decodeMultiProduceRequest,
  "produce-v2-response": p.decodeMultiProduceResponse,
  "produce-v3-request": p.decodePartitionedProduceRequest,
  "fetch-request": p.decodeFetchRequest,
  "fetch-response": p.decodeFetchResponse,
  "list-offsets-request": p.decodeListOffsetsRequest,
  "list-offsets-response": p.decodeListOffsetsResponse,
  "alter-topic-request": p.decodeAlterTopicRequest,
  "alter-topic-response": p.decodeAlterTopicResponse,
  "error-response": p.decodeErrorResponse,
  "replica-fetch-request": p.decodeReplicaFetchRequest,
  "replica-fetch-response": p.decodeReplicaFetchResponse,
  "replica-fetch-diverging-response": p.decodeReplicaFetchResponse,
};

test("a replica fetch response whose diverging flag is neither 0 nor 1 is malformed", () => {
  const frame = frameOf("replica-fetch-diverging-response");
  frame[6 + 4 + 8 + 8] = 2;
  assert.throws(() => p.decodeReplicaFetchResponse(frame), malformed);
});

function code(expected: number): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof ConchError, `not a ConchError: ${String(e)}`);
    assert.equal(e.code, expected, e.message);
    return true;
  };
}
const malformed = code(ErrorCode.MALFORMED_REQUEST);
const invalid = code(ErrorCode.INVALID_REQUEST);

/** The frame of a golden fixture, copied so a test can change it. */
function frameOf(name: string): Buffer {
  const b = fixtures.get(name);
  assert.ok(b);
  return Buffer.from(b.subarray(4));
}

test("every truncation of every message is malformed", () => {
  for (const [name, decode] of Object.entries(decoders)) {
    const frame = frameOf(name);
    for (let len = 0; len < frame.length; len++) {
      assert.throws(() => decode(frame.subarray(0, len)), malformed, `${name} cut to ${len} bytes`);
    }
  }
});

test("a trailing byte after any message is malformed", () => {
  for (const [name, decode] of Object.entries(decoders)) {
    const frame = Buffer.concat([frameOf(name), Buffer.from([0])]);
    assert.throws(() => decode(frame), malformed, name);
  }
});

test("a string length past the end is malformed", () => {
  const frame = frameOf("delete-topic-request");
  frame.writeUInt16BE(7, 8); // "orders" is 6 bytes
  assert.throws(() => p.decodeDeleteTopicRequest(frame), malformed);
});

test("a records length past the end is malformed, and so is one that leaves bytes over", () => {
  const frame = frameOf("produce-request");
  const at = 8 + 2 + 6 + 4 + 1 + 4;
  frame.writeUInt32BE(0xffffffff, at);
  assert.throws(() => p.decodeProduceRequest(frame), malformed);
  frame.writeUInt32BE(80, at);
  assert.throws(() => p.decodeProduceRequest(frame), malformed);
});

test("a forged array count is refused before anything is sized from it", () => {
  const topics = frameOf("list-topics-response");
  topics.writeUInt32BE(0xffffffff, 6);
  assert.throws(() => p.decodeListTopicsResponse(topics), /array count 4294967295 exceeds the frame/);
  // 8 strings of at least 2 bytes cannot fit in the 16 bytes left.
  topics.writeUInt32BE(9, 6);
  assert.throws(() => p.decodeListTopicsResponse(topics), malformed);

  const describe = frameOf("describe-topic-response");
  describe.writeUInt32BE(3, 6 + 8); // 3 partitions of 20 bytes do not fit before the configs
  assert.throws(() => p.decodeDescribeTopicResponse(describe), malformed);
  const ranges = frameOf("describe-topic-v2-response");
  // Partition 0's range count (after the topic, the partition count and 20 bytes): 2^32-1 ranges of
  // at least 20 bytes are refused before anything is allocated for them.
  ranges.writeUInt32BE(0xffffffff, 6 + 8 + 4 + 20);
  assert.throws(() => p.decodeDescribeTopicResponseV2(ranges), /array count 4294967295 exceeds the frame/);
  const placed = frameOf("describe-topic-v3-response");
  // Partition 0's replica count (after the topic, the partition count, partition, leader, epoch).
  placed.writeUInt32BE(0xffffffff, 6 + 8 + 4 + 12);
  assert.throws(() => p.decodeDescribeTopicResponseV3(placed), /array count 4294967295 exceeds the frame/);

  const create = frameOf("create-topic-request");
  create.writeUInt32BE(0x40000000, 8 + 8 + 4);
  assert.throws(() => p.decodeCreateTopicRequest(create), malformed);
});

test("a u64 past 2^53 - 1 is malformed", () => {
  const frame = frameOf("fetch-request");
  frame.writeUInt32BE(0x00200000, 8 + 8 + 4); // offset hi word: 2^53
  assert.throws(() => p.decodeFetchRequest(frame), malformed);
  frame.writeUInt32BE(0x001fffff, 8 + 8 + 4);
  frame.writeUInt32BE(0xffffffff, 8 + 8 + 8);
  assert.equal(p.decodeFetchRequest(frame).offset, Number.MAX_SAFE_INTEGER);
});

test("acks outside 0..3 and offset spec outside 0..2 are well-formed but invalid; found outside 0..1 is malformed", () => {
  const produce = frameOf("produce-request");
  produce[8 + 8 + 4] = 3;
  assert.equal(p.decodeProduceRequest(produce).acks, p.Acks.ALL);
  produce[8 + 8 + 4] = 4;
  assert.throws(() => p.decodeProduceRequest(produce), invalid);
  const list = frameOf("list-offsets-request");
  list[8 + 8 + 4] = 3;
  assert.throws(() => p.decodeListOffsetsRequest(list), invalid);
  const found = frameOf("list-offsets-response");
  found[6] = 2;
  assert.throws(() => p.decodeListOffsetsResponse(found), malformed);
});

test("configs: a key given twice is malformed, and __proto__ is only a key", () => {
  const twice = p.encodeAlterTopicRequest(1, { topic: "t", configs: { a: "1" } });
  // Hand-build a request with the entry "a" twice.
  const entry = Buffer.from([0, 1, 0x61, 0, 1, 0x31]);
  const body = Buffer.concat([twice.subarray(12, 12 + 3), Buffer.from([0, 0, 0, 2]), entry, entry]);
  const frame = Buffer.concat([twice.subarray(4, 12), body]);
  assert.throws(() => p.decodeAlterTopicRequest(frame), malformed);

  const proto = JSON.parse('{"__proto__": "x", "flush": "sync"}') as Record<string, string>;
  const decoded = p.decodeAlterTopicRequest(
    p.encodeAlterTopicRequest(1, { topic: "t", configs: proto }).subarray(4),
  );
  assert.equal(Object.getPrototypeOf(decoded.configs), null);
  assert.deepEqual(Object.keys(decoded.configs).sort(), ["__proto__", "flush"]);
  assert.equal(Object.getOwnPropertyDescriptor(decoded.configs, "__proto__")?.value, "x");
});

test("error responses: a success is not one, and code 0 cannot be sent as one", () => {
  assert.throws(() => p.decodeErrorResponse(frameOf("produce-response")), malformed);
  assert.throws(() => p.encodeErrorResponse(1, 0, "fine"), RangeError);
  assert.throws(() => p.decodeErrorResponse(Buffer.alloc(3)), malformed);
});

test("an error message too long for a string is cut, not refused", () => {
  const long = "é".repeat(40_000); // 80,000 UTF-8 bytes
  const err = p.decodeErrorResponse(p.encodeErrorResponse(1, ErrorCode.INTERNAL, long).subarray(4));
  assert.equal(err.code, ErrorCode.INTERNAL);
  assert.ok(long.startsWith(err.message));
  assert.ok(err.message.length > 10_000);
});

test("encoders refuse values that do not fit their fields instead of wrapping them", () => {
  const fetch = { topic: "t", partition: 0, offset: 0, maxBytes: 1, maxWaitMs: 0, minBytes: 0 };
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, partition: -1 }), invalid);
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, partition: 2 ** 32 }), invalid);
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, maxWaitMs: 1.5 }), invalid);
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, offset: 2 ** 53 }), invalid);
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, offset: -1 }), invalid);
  assert.throws(() => p.encodeFetchRequest(1, { ...fetch, topic: "x".repeat(65_536) }), invalid);
  assert.throws(
    () => p.encodeHandshakeRequest(1, { minVersion: 70_000, maxVersion: 1, clientId: "" }),
    invalid,
  );
  assert.throws(() => p.encodeListOffsetsResponse(-1, { found: true, offset: 0 }), invalid);
  assert.equal(p.encodeDeleteTopicRequest(1, { topic: "x".repeat(65_535) }).length, 12 + 2 + 65_535);
});

test("i64 writes and reads -1 as all ones", () => {
  const w = new p.WireWriter(16).i64(-1).i64(7);
  const buf = w.finish();
  assert.deepEqual(buf.subarray(0, 8), Buffer.alloc(8, 0xff));
  const r = new p.WireReader(buf, 0);
  assert.equal(r.i64(), -1);
  assert.equal(r.i64(), 7);
  r.done();
  assert.throws(() => new p.WireWriter(8).i64(-2), invalid);
});

test("a writer whose size disagrees with what was written is a bug, and says so", () => {
  assert.throws(() => new p.WireWriter(3).u16(1).finish(), /wrote 2 bytes into a buffer sized 3/);
});

test("fuzz: random frames given to every decoder throw nothing but ConchError", () => {
  const all = Object.values(decoders);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      const frame = Buffer.from(bytes);
      for (const decode of all) {
        try {
          decode(frame);
        } catch (e) {
          assert.ok(e instanceof ConchError, String(e));
        }
      }
    }),
    { numRuns: 300 },
  );
});

test("fuzz: golden frames with random bytes changed throw nothing but ConchError", () => {
  const names = Object.keys(decoders);
  fc.assert(
    fc.property(
      fc.constantFrom(...names),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      (name, changes) => {
        const frame = frameOf(name);
        for (const [at, v] of changes) frame[at % frame.length] = v;
        try {
          decoders[name]!(frame);
        } catch (e) {
          assert.ok(e instanceof ConchError, String(e));
        }
      },
    ),
    { numRuns: 500 },
  );
});

test("DescribeTopic version 3: a scope or a figuresKnown flag other than 0 or 1 is refused", () => {
  const req = frameOf("describe-topic-v3-request");
  req.writeUInt8(2, 8 + 8);
  assert.throws(() => p.decodeDescribeTopicRequestV3(req), /describe scope 2 is not 0 or 1/);
  const res = frameOf("describe-topic-v3-response");
  // Partition 0's flag, after its two lists of two broker ids.
  res.writeUInt8(2, 6 + 8 + 4 + 12 + 12 + 12);
  assert.throws(() => p.decodeDescribeTopicResponseV3(res), /figuresKnown must be 0 or 1, got 2/);
});

test("produce version 2: a forged partition count, none, or more than the limit is refused before allocating", () => {
  const frame = frameOf("produce-v2-request");
  const countAt = 8 + 2 + 6 + 1 + 4;
  frame.writeUInt32BE(0xffffffff, countAt);
  assert.throws(() => p.decodeMultiProduceRequest(frame), /array count 4294967295 exceeds the frame/);
  frame.writeUInt32BE(0, countAt);
  assert.throws(() => p.decodeMultiProduceRequest(frame), invalid);
  // More entries than the limit, each well-formed (partition 0, no records).
  const n = p.MAX_PRODUCE_PARTITIONS + 1;
  const many = Buffer.alloc(countAt + 4 + n * 8);
  frame.copy(many, 0, 0, countAt);
  many.writeUInt32BE(n, countAt);
  assert.throws(() => p.decodeMultiProduceRequest(many), invalid);
  many.writeUInt32BE(n - 1, countAt);
  assert.throws(() => p.decodeMultiProduceRequest(many), malformed, "8 bytes left over");
  assert.equal(p.decodeMultiProduceRequest(many.subarray(0, many.length - 8)).partitions.length, n - 1);
  const entry = { partition: 0, records: Buffer.alloc(0) };
  const req = {
    topic: "t",
    acks: p.Acks.LEADER,
    timeoutMs: 0,
    partitions: [] as { partition: number; records: Buffer }[],
  };
  assert.throws(() => p.encodeMultiProduceRequest(1, req), invalid);
  req.partitions = new Array(n).fill(entry);
  assert.throws(() => p.encodeMultiProduceRequest(1, req), invalid);
});

test("produce version 2: an entry's records length past the end is malformed, and acks past 3 invalid", () => {
  const frame = frameOf("produce-v2-request");
  const firstRecordsAt = 8 + 2 + 6 + 1 + 4 + 4 + 4;
  frame.writeUInt32BE(0xffffff, firstRecordsAt);
  assert.throws(() => p.decodeMultiProduceRequest(frame), malformed);
  const acks = frameOf("produce-v2-request");
  acks[8 + 2 + 6] = 4;
  assert.throws(() => p.decodeMultiProduceRequest(acks), invalid);
});

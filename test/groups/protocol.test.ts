/**
 * The group messages survive encode -> frame parser -> decode for arbitrary values, and a body cut
 * short or padded anywhere is MALFORMED_REQUEST, never a read past the end or another error.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import * as net from "../../src/net/index.js";
import * as p from "../../src/protocol/index.js";

function frameOf(message: Buffer): Buffer {
  const parser = new net.FrameParser({ maxFrameBytes: message.length });
  parser.push(message);
  const frame = parser.next();
  assert.ok(frame);
  return frame;
}

const rec = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> =>
  fc.record(model, { noNullPrototype: true });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const i64 = fc.oneof(fc.constant(-1), u64);
const str = fc.string({ unit: "binary", maxLength: 20 });
const assignment = fc.array(
  rec<p.TopicPartitions>({ topic: str, partitions: fc.array(u32, { maxLength: 5 }) }),
  {
    maxLength: 4,
  },
);
const offsets = fc.array(rec<p.PartitionOffset>({ topic: str, partition: u32, offset: u64 }), {
  maxLength: 5,
});
const state = fc.constantFrom(0, 1, 2) as fc.Arbitrary<p.GroupStateValue>;

interface Codec<T> {
  name: string;
  arb: fc.Arbitrary<T>;
  encode(id: number, v: T): Buffer;
  decode(frame: Buffer): T;
}

const codec = <T>(c: Codec<T>): Codec<unknown> => c as Codec<unknown>;

const codecs: Codec<unknown>[] = [
  codec({
    name: "JoinGroup request",
    arb: rec<p.JoinGroupRequest>({
      group: str,
      memberId: str,
      clientId: str,
      topics: fc.array(str, { maxLength: 4 }),
      strategy: str,
      sessionTimeoutMs: u32,
      rebalanceTimeoutMs: u32,
    }),
    encode: p.encodeJoinGroupRequest,
    decode: p.decodeJoinGroupRequest,
  }),
  codec({
    name: "JoinGroup response",
    arb: rec<p.JoinGroupResponse>({ generation: u32, memberId: str, strategy: str, assignment }),
    encode: p.encodeJoinGroupResponse,
    decode: p.decodeJoinGroupResponse,
  }),
  codec({
    name: "Heartbeat request",
    arb: rec<p.HeartbeatRequest>({ group: str, memberId: str, generation: u32 }),
    encode: p.encodeHeartbeatRequest,
    decode: p.decodeHeartbeatRequest,
  }),
  codec({
    name: "LeaveGroup request",
    arb: rec<p.LeaveGroupRequest>({ group: str, memberId: str }),
    encode: p.encodeLeaveGroupRequest,
    decode: p.decodeLeaveGroupRequest,
  }),
  codec({
    name: "CommitOffsets request",
    arb: rec<p.CommitOffsetsRequest>({ group: str, memberId: str, generation: u32, offsets }),
    encode: p.encodeCommitOffsetsRequest,
    decode: p.decodeCommitOffsetsRequest,
  }),
  codec({
    name: "FetchOffsets request",
    arb: rec<p.FetchOffsetsRequest>({
      group: str,
      partitions: fc.array(rec<p.GroupTopicPartition>({ topic: str, partition: u32 }), { maxLength: 5 }),
    }),
    encode: p.encodeFetchOffsetsRequest,
    decode: p.decodeFetchOffsetsRequest,
  }),
  codec({
    name: "FetchOffsets response",
    arb: rec<p.FetchOffsetsResponse>({
      offsets: fc.array(rec<p.PartitionOffset>({ topic: str, partition: u32, offset: i64 }), {
        maxLength: 5,
      }),
    }),
    encode: p.encodeFetchOffsetsResponse,
    decode: p.decodeFetchOffsetsResponse,
  }),
  codec({
    name: "ListGroups response",
    arb: rec<p.ListGroupsResponse>({
      groups: fc.array(rec<p.GroupListing>({ group: str, state, members: u32 }), { maxLength: 5 }),
    }),
    encode: p.encodeListGroupsResponse,
    decode: p.decodeListGroupsResponse,
  }),
  codec({
    name: "DescribeGroup response",
    arb: rec<p.DescribeGroupResponse>({
      group: str,
      state,
      generation: u32,
      strategy: str,
      members: fc.array(rec<p.GroupMemberDescription>({ memberId: str, clientId: str, assignment }), {
        maxLength: 3,
      }),
      partitions: fc.array(
        rec<p.GroupPartitionDescription>({
          topic: str,
          partition: u32,
          owner: str,
          committed: i64,
          highWatermark: u64,
          lag: i64,
        }),
        { maxLength: 4 },
      ),
    }),
    encode: p.encodeDescribeGroupResponse,
    decode: p.decodeDescribeGroupResponse,
  }),
  codec({
    name: "ResetOffsets request",
    arb: rec<p.ResetOffsetsRequest>({
      group: str,
      topic: str,
      to: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<p.ResetToValue>,
      value: u64,
    }),
    encode: p.encodeResetOffsetsRequest,
    decode: p.decodeResetOffsetsRequest,
  }),
  codec({
    name: "ResetOffsets response",
    arb: rec<p.ResetOffsetsResponse>({
      offsets: fc.array(rec<p.ResetPartitionOffset>({ partition: u32, offset: u64 }), { maxLength: 5 }),
    }),
    encode: p.encodeResetOffsetsResponse,
    decode: p.decodeResetOffsetsResponse,
  }),
  codec({
    name: "Fetch version 2 request",
    arb: rec<p.FetchRequest>({
      topic: str,
      partition: u32,
      offset: u64,
      maxBytes: u32,
      maxWaitMs: u32,
      minBytes: u32,
      group: str.filter((g) => g !== ""),
      memberId: str,
      generation: u32,
    }),
    encode: p.encodeFetchRequest,
    decode: p.decodeFetchRequest,
  }),
];

const malformed = (err: unknown): boolean =>
  err instanceof ConchError && err.code === ErrorCode.MALFORMED_REQUEST;

for (const c of codecs) {
  test(`${c.name}: round trip, and every truncation or padding is malformed`, () => {
    fc.assert(
      fc.property(u32, c.arb, (id, value) => {
        const message = c.encode(id, value);
        const frame = frameOf(message);
        assert.deepEqual(c.decode(frame), value);
        // Cut the body at every length, keeping the header; then one byte too many.
        const header = c.name.endsWith("response") ? 6 : 8;
        for (let end = header; end < frame.length; end++) {
          assert.throws(() => c.decode(frame.subarray(0, end)), malformed, `cut at ${end}`);
        }
        assert.throws(() => c.decode(Buffer.concat([frame, Buffer.alloc(1)])), malformed, "padded");
      }),
      { numRuns: 60 },
    );
  });
}

test("a Fetch without a group is sent at version 1, byte for byte as before", () => {
  const v1 = p.encodeFetchRequest(7, {
    topic: "t",
    partition: 0,
    offset: 1,
    maxBytes: 2,
    maxWaitMs: 3,
    minBytes: 4,
  });
  const empty = p.encodeFetchRequest(7, {
    topic: "t",
    partition: 0,
    offset: 1,
    maxBytes: 2,
    maxWaitMs: 3,
    minBytes: 4,
    group: "",
    memberId: "m",
    generation: 9,
  });
  assert.deepEqual(empty, v1);
  assert.equal(p.requestApiVersion(frameOf(v1)), 1);
});

test("unknown group states and reset targets are refused", () => {
  const lg = p.encodeListGroupsResponse(1, { groups: [{ group: "g", state: 2, members: 1 }] });
  lg[lg.length - 5] = 4; // 3 is CompletingRebalance (a Kafka group waiting for its leader)
  assert.throws(() => p.decodeListGroupsResponse(frameOf(lg)), malformed);
  const ro = p.encodeResetOffsetsRequest(1, { group: "g", topic: "t", to: 3, value: 0 });
  ro[ro.length - 9] = 4;
  assert.throws(
    () => p.decodeResetOffsetsRequest(frameOf(ro)),
    (err: unknown) => err instanceof ConchError && err.code === ErrorCode.INVALID_REQUEST,
  );
  assert.equal(p.apiName(p.ApiKey.JOIN_GROUP), "JOIN_GROUP");
  assert.equal(p.apiName(p.ApiKey.DELETE_GROUP), "DELETE_GROUP");
  assert.equal(p.apiName(p.ApiKey.FIND_COORDINATOR), "FIND_COORDINATOR");
  assert.equal(p.apiName(30), "API_30");
});

/**
 * The group requests over a real socket: a join long-polls and ends with its connection, Fetch
 * version 2 is checked for ownership, and every group request answers with its typed error.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { parseAddress } from "../../src/client/address.js";
import { Connection } from "../../src/client/connection.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, conchError, serve, until } from "./helpers.js";

async function connect(t: TestContext, address: string): Promise<Connection> {
  const conn = await Connection.open(parseAddress(address), {
    clientId: "wire-test",
    connectTimeoutMs: 2000,
    requestTimeoutMs: 5000,
  });
  t.after(() => conn.close());
  return conn;
}

const joinReq = (memberId = ""): p.JoinGroupRequest => ({
  group: "g",
  memberId,
  clientId: "wire",
  topics: ["orders"],
  strategy: "roundrobin",
  sessionTimeoutMs: 10_000,
  rebalanceTimeoutMs: 10_000,
});

const fetchReq = (partition: number, extra: Partial<p.FetchRequest> = {}): p.FetchRequest => ({
  topic: "orders",
  partition,
  offset: 0,
  maxBytes: 1 << 20,
  maxWaitMs: 0,
  minBytes: 1,
  ...extra,
});

test("fetch version 2 serves the partition's owner only, in its generation", async (t) => {
  const { broker, address } = await serve(t);
  await broker.createTopic("orders", 2);
  await broker.produce("orders", 0, batchOf(["a", "b"]), "leader");
  const conn = await connect(t, address);
  const joined = await conn.request(p.encodeJoinGroupRequest, joinReq(), p.decodeJoinGroupResponse);
  assert.equal(joined.generation, 1);
  assert.equal(joined.strategy, "roundrobin");
  assert.deepEqual(joined.assignment, [{ topic: "orders", partitions: [0, 1] }]);
  const member = { group: "g", memberId: joined.memberId, generation: 1 };

  const owned = await conn.request(p.encodeFetchRequest, fetchReq(0, member), p.decodeFetchResponse);
  assert.equal(owned.highWatermark, 2);
  assert.ok(owned.records.length > 0);
  await assert.rejects(
    conn.request(p.encodeFetchRequest, fetchReq(0, { ...member, generation: 7 }), p.decodeFetchResponse),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  await assert.rejects(
    conn.request(p.encodeFetchRequest, fetchReq(0, { ...member, memberId: "ghost" }), p.decodeFetchResponse),
    conchError(ErrorCode.UNKNOWN_MEMBER),
  );
  // Without a group (version 1, or version 2 with ""), nothing is checked.
  const plain = await conn.request(p.encodeFetchRequest, fetchReq(0), p.decodeFetchResponse);
  assert.equal(plain.highWatermark, 2);

  // A second member takes partition 1 away: the first may no longer fetch it.
  const other = await connect(t, address);
  const otherJoin = other.request(p.encodeJoinGroupRequest, joinReq(), p.decodeJoinGroupResponse, {
    extraWaitMs: 10_000,
  });
  await assert.rejects(
    conn.request(p.encodeHeartbeatRequest, member, p.decodeHeartbeatResponse),
    conchError(ErrorCode.REBALANCE_IN_PROGRESS),
  );
  await conn.request(
    p.encodeCommitOffsetsRequest,
    { ...member, offsets: [{ topic: "orders", partition: 0, offset: 1 }] },
    p.decodeCommitOffsetsResponse,
  );
  const rejoined = await conn.request(
    p.encodeJoinGroupRequest,
    joinReq(joined.memberId),
    p.decodeJoinGroupResponse,
  );
  const second = await otherJoin;
  assert.equal(rejoined.generation, 2);
  assert.equal(second.generation, 2);
  const mine = rejoined.assignment[0]!.partitions;
  const theirs = second.assignment[0]!.partitions;
  assert.equal(mine.length, 1);
  assert.equal(theirs.length, 1);
  const gen2 = { ...member, generation: 2 };
  await conn.request(p.encodeFetchRequest, fetchReq(mine[0]!, gen2), p.decodeFetchResponse);
  await assert.rejects(
    conn.request(p.encodeFetchRequest, fetchReq(theirs[0]!, gen2), p.decodeFetchResponse),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  // The commit made during the rebalance is there for whoever owns partition 0 now.
  const offsets = await other.request(
    p.encodeFetchOffsetsRequest,
    { group: "g", partitions: [{ topic: "orders", partition: 0 }] },
    p.decodeFetchOffsetsResponse,
  );
  assert.deepEqual(offsets.offsets, [{ topic: "orders", partition: 0, offset: 1 }]);
});

test("a join waits for the rebalance and ends when its connection closes", async (t) => {
  const { broker, address } = await serve(t);
  await broker.createTopic("orders", 2);
  const first = await connect(t, address);
  await first.request(p.encodeJoinGroupRequest, joinReq(), p.decodeJoinGroupResponse);
  const waiting = await connect(t, address);
  const join = waiting.request(p.encodeJoinGroupRequest, joinReq(), p.decodeJoinGroupResponse, {
    extraWaitMs: 10_000,
  });
  join.catch(() => {});
  await until(() => broker.groups.describeGroup("g").members.length === 2, "the second member to arrive");
  assert.equal(broker.groups.describeGroup("g").state, "PreparingRebalance");
  waiting.close();
  await assert.rejects(join, conchError(ErrorCode.CONNECTION_CLOSED));
  // The broker forgets the member that never learnt its id.
  await until(() => broker.groups.describeGroup("g").members.length === 1, "the abandoned member to go");
});

test("group requests answer with typed errors; other fetch versions are refused", async (t) => {
  const { broker, address } = await serve(t);
  await broker.createTopic("orders", 1);
  const conn = await connect(t, address);
  await assert.rejects(
    conn.request(
      p.encodeHeartbeatRequest,
      { group: "g", memberId: "m", generation: 1 },
      p.decodeHeartbeatResponse,
    ),
    conchError(ErrorCode.UNKNOWN_MEMBER),
  );
  await assert.rejects(
    conn.request(p.encodeJoinGroupRequest, { ...joinReq(), group: "" }, p.decodeJoinGroupResponse),
    conchError(ErrorCode.INVALID_GROUP),
  );
  await assert.rejects(
    conn.request(p.encodeDescribeGroupRequest, { group: "nobody" }, p.decodeDescribeGroupResponse),
    conchError(ErrorCode.UNKNOWN_GROUP),
  );
  await conn.request(
    p.encodeCommitOffsetsRequest,
    { group: "solo", memberId: "", generation: 0, offsets: [{ topic: "orders", partition: 0, offset: 0 }] },
    p.decodeCommitOffsetsResponse,
  );
  const listed = await conn.request(p.encodeListGroupsRequest, undefined, (f) =>
    p.decodeListGroupsResponse(f),
  );
  assert.deepEqual(listed.groups, [{ group: "solo", state: p.GroupState.EMPTY, members: 0 }]);
  const reset = await conn.request(
    p.encodeResetOffsetsRequest,
    { group: "solo", topic: "orders", to: p.ResetTo.LATEST, value: 0 },
    p.decodeResetOffsetsResponse,
  );
  assert.deepEqual(reset.offsets, [{ partition: 0, offset: 0 }]);
  await conn.request(p.encodeDeleteGroupRequest, { group: "solo" }, p.decodeDeleteGroupResponse);
  const v3 = (id: number): Buffer => {
    const b = p.encodeFetchRequest(id, fetchReq(0));
    b.writeUInt16BE(3, 6);
    return b;
  };
  await assert.rejects(
    conn.request(v3, undefined, p.decodeFetchResponse),
    conchError(ErrorCode.UNSUPPORTED_VERSION, /only 1-2/),
  );
});

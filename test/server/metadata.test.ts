import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { startServer } from "./helpers.js";

test("Metadata on a single-node broker: broker 0 (this connection's broker) leads every partition at epoch 0", async (t) => {
  const { client } = await startServer(t);
  const c = await client();
  p.decodeCreateTopicResponse(
    await c.call((id) => p.encodeCreateTopicRequest(id, { topic: "orders", partitions: 2, configs: {} })),
  );
  const all = p.decodeMetadataResponse(await c.call((id) => p.encodeMetadataRequest(id, [])));
  assert.deepEqual(all, {
    brokerId: 0,
    controllerId: 0,
    brokers: [{ id: 0, host: "", port: 0 }],
    topics: [
      {
        name: "orders",
        errorCode: ErrorCode.NONE,
        partitions: [
          { partition: 0, leaderId: 0, leaderEpoch: 0, replicas: [0], isr: [0] },
          { partition: 1, leaderId: 0, leaderEpoch: 0, replicas: [0], isr: [0] },
        ],
      },
    ],
  });
  const named = p.decodeMetadataResponse(await c.call((id) => p.encodeMetadataRequest(id, ["nope"])));
  assert.deepEqual(named.topics, [{ name: "nope", errorCode: ErrorCode.UNKNOWN_TOPIC, partitions: [] }]);
});

test("a single-node broker refuses a replication factor above 1 and takes 1", async (t) => {
  const { client, broker } = await startServer(t);
  const c = await client();
  await assert.rejects(
    c
      .call((id) =>
        p.encodeCreateTopicRequest(id, {
          topic: "wide",
          partitions: 1,
          configs: { "replication.factor": "2" },
        }),
      )
      .then(p.decodeCreateTopicResponse),
    (err: { code: number }) => err.code === ErrorCode.INVALID_REPLICATION_FACTOR,
  );
  p.decodeCreateTopicResponse(
    await c.call((id) =>
      p.encodeCreateTopicRequest(id, { topic: "one", partitions: 1, configs: { "replication.factor": "1" } }),
    ),
  );
  assert.deepEqual(broker.listTopics(), ["one"]);
  assert.deepEqual(
    broker.describeTopic("one").configs["replication.factor"],
    undefined,
    "not kept as a config",
  );
});

test("Metadata response: golden bytes, decoded and re-encoded byte for byte, -1 as 0xffffffff", () => {
  const res: p.MetadataResponse = {
    brokerId: 2,
    controllerId: -1,
    brokers: [{ id: 2, host: "h", port: 7420 }],
    topics: [
      {
        name: "t",
        errorCode: 0,
        partitions: [{ partition: 0, leaderId: -1, leaderEpoch: 3, replicas: [2], isr: [] }],
      },
    ],
  };
  const hex = [
    "00000040", // size
    "00000007", // correlationId
    "0000", // errorCode
    "00000002", // brokerId
    "ffffffff", // controllerId: none
    "00000001",
    "00000002",
    "000168",
    "1cfc", // brokers: 1 x (id 2, host "h", port 7420)
    "00000001",
    "000174",
    "0000", // topics: 1 x (name "t", errorCode 0,
    "00000001",
    "00000000",
    "ffffffff",
    "00000003", // partitions: 1 x (0, leader offline, epoch 3,
    "00000001",
    "00000002",
    "00000000", // replicas [2], isr []))
  ].join("");
  const bytes = p.encodeMetadataResponse(7, res);
  assert.equal(bytes.toString("hex"), hex);
  assert.deepEqual(p.decodeMetadataResponse(bytes.subarray(4)), res);
});

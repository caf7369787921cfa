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

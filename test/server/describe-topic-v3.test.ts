import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { startServer } from "./helpers.js";

test("DescribeTopic version 3 on a single-node broker: broker 0 leads every partition, figures known; version 2 unchanged", async (t) => {
  const { client } = await startServer(t);
  const c = await client();
  p.decodeCreateTopicResponse(
    await c.call((id) => p.encodeCreateTopicRequest(id, { topic: "orders", partitions: 2, configs: {} })),
  );
  const v3 = p.decodeDescribeTopicResponseV3(
    await c.call((id) => p.encodeDescribeTopicRequestV3(id, { topic: "orders" })),
  );
  assert.deepEqual(
    v3.partitions.map((x) => [x.partition, x.leaderId, x.leaderEpoch, x.replicas, x.isr, x.figuresKnown]),
    [
      [0, 0, 0, [0], [0], true],
      [1, 0, 0, [0], [0], true],
    ],
  );
  for (const x of v3.partitions) {
    assert.equal(x.logStartOffset, 0);
    assert.equal(x.highWatermark, 0);
    assert.equal(x.logEndOffset, 0);
    assert.equal(typeof x.sizeBytes, "number");
    assert.deepEqual(x.quarantined, []);
  }
  const v2 = p.decodeDescribeTopicResponseV2(
    await c.call((id) => p.encodeDescribeTopicRequestV2(id, { topic: "orders" })),
  );
  assert.deepEqual(v2.partitions, [
    { partition: 0, logStartOffset: 0, highWatermark: 0, quarantined: [] },
    { partition: 1, logStartOffset: 0, highWatermark: 0, quarantined: [] },
  ]);
  assert.deepEqual(v3.configs, v2.configs);
  // Scope 1 (what a broker asks a leader) is the same here: a single node leads everything.
  const led = p.decodeDescribeTopicResponseV3(
    await c.call((id) =>
      p.encodeDescribeTopicRequestV3(id, { topic: "orders", scope: p.DescribeScope.LED_HERE }),
    ),
  );
  assert.deepEqual(led, v3);
  await assert.rejects(
    c
      .call((id) => p.encodeDescribeTopicRequestV3(id, { topic: "nope" }))
      .then(p.decodeDescribeTopicResponseV3),
    (err: { code: number }) => err.code === ErrorCode.UNKNOWN_TOPIC,
  );
});

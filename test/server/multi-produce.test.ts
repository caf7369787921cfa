/**
 * Produce version 2 on a real broker: each partition's entry succeeds or fails on its own, in
 * request order, and acks = 0 gets no response.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, fetchAll, recordsOf, startServer } from "./helpers.js";

test("one request's good partitions are stored and its bad ones answered with their own error", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 3);
  const c = await f.client();
  const corrupt = batchOf(["bad"]);
  corrupt[corrupt.length - 1]! ^= 0xff;
  const res = p.decodeMultiProduceResponse(
    await c.call((id) =>
      p.encodeMultiProduceRequest(id, {
        topic: "t",
        acks: 1,
        timeoutMs: 1000,
        partitions: [
          { partition: 0, records: batchOf(["a", "b"]) },
          { partition: 7, records: batchOf(["nowhere"]) },
          { partition: 1, records: corrupt },
          { partition: 2, records: batchOf(["c"]) },
          { partition: 0, records: batchOf(["d"]) },
        ],
      }),
    ),
  );
  assert.deepEqual(
    res.partitions.map((r) => [r.partition, r.errorCode, r.baseOffset, r.lastOffset]),
    [
      [0, 0, 0, 1],
      [7, ErrorCode.UNKNOWN_PARTITION, -1, -1],
      [1, ErrorCode.CORRUPT_BATCH, -1, -1],
      [2, 0, 0, 0],
      [0, 0, 2, 2],
    ],
  );
  assert.match(res.partitions[1]!.message, /partition/);
  assert.equal(res.partitions[0]!.message, "");
  assert.deepEqual(recordsOf((await fetchAll(c, 0)).records), [
    [0, "a"],
    [1, "b"],
    [2, "d"],
  ]);
  assert.equal((await fetchAll(c, 1)).highWatermark, 0);
  assert.deepEqual(recordsOf((await fetchAll(c, 2)).records), [[0, "c"]]);
});

test("a whole-request failure is an error response: bad acks, no partitions", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 1);
  const c = await f.client();
  const good = p.encodeMultiProduceRequest(1, {
    topic: "t",
    acks: 1,
    timeoutMs: 1000,
    partitions: [{ partition: 0, records: batchOf(["a"]) }],
  });
  // acks 9 (the byte after the topic string), then a partition count of 0.
  const badAcks = Buffer.from(good);
  badAcks[4 + 8 + 2 + 1] = 9;
  const none = Buffer.from(good);
  none.writeUInt32BE(0, 4 + 8 + 2 + 1 + 1 + 4);
  for (const [frame, code] of [
    [badAcks, ErrorCode.INVALID_REQUEST],
    [none, ErrorCode.INVALID_REQUEST],
  ] as const) {
    const id = c.id();
    frame.writeUInt32BE(id, 8);
    c.send(frame);
    assert.equal(p.responseErrorCode(await c.response(id)), code);
  }
  assert.equal((await fetchAll(c, 0)).highWatermark, 0);
});

test("acks = 0: the request is stored and answered with nothing", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 2);
  const c = await f.client();
  c.send(
    p.encodeMultiProduceRequest(c.id(), {
      topic: "t",
      acks: 0,
      timeoutMs: 1000,
      partitions: [
        { partition: 0, records: batchOf(["a"]) },
        { partition: 9, records: batchOf(["lost"]) },
        { partition: 1, records: batchOf(["b"]) },
      ],
    }),
  );
  // Requests are processed in order: the next answer on the connection is the fetch's.
  const fetched = await fetchAll(c, 1);
  assert.deepEqual(recordsOf(fetched.records), [[0, "b"]]);
  assert.deepEqual(recordsOf((await fetchAll(c, 0)).records), [[0, "a"]]);
  assert.equal(c.received, 0);
});

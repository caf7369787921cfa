import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, until } from "./helpers.js";

test("admin and data round trip: create, produce, fetch, list offsets, describe, alter, delete", async (t) => {
  const { client } = await startServer(t);
  const c = await client();

  p.decodeCreateTopicResponse(
    await c.call((id) => p.encodeCreateTopicRequest(id, { topic: "orders", partitions: 2, configs: {} })),
  );
  assert.deepEqual(p.decodeListTopicsResponse(await c.call((id) => p.encodeListTopicsRequest(id))).topics, [
    "orders",
  ]);

  const batch = batchOf(["a", "b", "c"]);
  const produced = p.decodeProduceResponse(
    await c.call((id) =>
      p.encodeProduceRequest(id, { topic: "orders", partition: 1, acks: 1, timeoutMs: 1000, records: batch }),
    ),
  );
  assert.deepEqual(produced, { baseOffset: 0, lastOffset: 2 });

  const fetched = p.decodeFetchResponse(
    await c.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "orders",
        partition: 1,
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    ),
  );
  assert.equal(fetched.highWatermark, 3);
  assert.equal(fetched.logStartOffset, 0);
  assert.deepEqual(recordsOf(fetched.records), [
    [0, "a"],
    [1, "b"],
    [2, "c"],
  ]);
  // The stored batch comes back byte for byte as produced (its base offset was 0 already).
  assert.deepEqual(fetched.records, batch);

  const latest = p.decodeListOffsetsResponse(
    await c.call((id) =>
      p.encodeListOffsetsRequest(id, {
        topic: "orders",
        partition: 1,
        spec: p.OffsetSpec.LATEST,
        timestampMs: 0,
      }),
    ),
  );
  assert.deepEqual(latest, { found: true, offset: 3 });

  p.decodeAlterTopicResponse(
    await c.call((id) =>
      p.encodeAlterTopicRequest(id, { topic: "orders", configs: { "retention.ms": "60000" } }),
    ),
  );
  const described = p.decodeDescribeTopicResponse(
    await c.call((id) => p.encodeDescribeTopicRequest(id, { topic: "orders" })),
  );
  assert.equal(described.topic, "orders");
  assert.deepEqual(described.partitions, [
    { partition: 0, logStartOffset: 0, highWatermark: 0 },
    { partition: 1, logStartOffset: 0, highWatermark: 3 },
  ]);
  assert.equal(described.configs["retention.ms"], "60000");

  p.decodeDeleteTopicResponse(await c.call((id) => p.encodeDeleteTopicRequest(id, { topic: "orders" })));
  const gone = await c.call((id) => p.encodeDescribeTopicRequest(id, { topic: "orders" }));
  assert.equal(p.responseError(gone)?.code, ErrorCode.UNKNOWN_TOPIC);
});

test("pipelined produces on one connection are appended in arrival order", async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("seq", 1);
  const c = await client();
  const n = 200;
  const ids: number[] = [];
  const messages: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const id = c.id();
    ids.push(id);
    messages.push(
      p.encodeProduceRequest(id, {
        topic: "seq",
        partition: 0,
        acks: 1,
        timeoutMs: 1000,
        records: batchOf([`m${i}`]),
      }),
    );
  }
  c.send(Buffer.concat(messages)); // one write: the broker sees them all in one or a few chunks
  for (let i = 0; i < n; i++) {
    assert.deepEqual(p.decodeProduceResponse(await c.response(ids[i]!)), { baseOffset: i, lastOffset: i });
  }
  const all = p.decodeFetchResponse(
    await c.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "seq",
        partition: 0,
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    ),
  );
  assert.deepEqual(
    recordsOf(all.records),
    Array.from({ length: n }, (_, i) => [i, `m${i}`]),
  );
});

test("acks=0 produces get no response; the next request's response comes next", async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("quiet", 1);
  const c = await client();
  for (let i = 0; i < 5; i++) {
    c.send(
      p.encodeProduceRequest(c.id(), {
        topic: "quiet",
        partition: 0,
        acks: 0,
        timeoutMs: 0,
        records: batchOf([`q${i}`]),
      }),
    );
  }
  // Failing acks=0 produces are silent too: an unknown topic (refused later, after the lookup) and
  // an unknown partition or a corrupt batch (refused at once).
  const corrupt = batchOf(["bad"]);
  corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
  for (const [topic, partition, records] of [
    ["nope", 0, batchOf(["x"])],
    ["quiet", 7, batchOf(["x"])],
    ["quiet", 0, corrupt],
  ] as const) {
    c.send(p.encodeProduceRequest(c.id(), { topic, partition, acks: 0, timeoutMs: 0, records }));
  }
  // Appends to one partition complete in order: once this one is answered, the five are stored.
  const id = c.id();
  c.send(
    p.encodeProduceRequest(id, {
      topic: "quiet",
      partition: 0,
      acks: 1,
      timeoutMs: 0,
      records: batchOf(["loud"]),
    }),
  );
  const first = await c.next();
  assert.ok(first);
  assert.equal(p.responseCorrelationId(first), id);
  assert.deepEqual(p.decodeProduceResponse(first), { baseOffset: 5, lastOffset: 5 });
  const res = p.decodeFetchResponse(
    await c.call((fid) =>
      p.encodeFetchRequest(fid, {
        topic: "quiet",
        partition: 0,
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    ),
  );
  assert.equal(res.highWatermark, 6);
  assert.deepEqual(
    recordsOf(res.records).map(([, v]) => v),
    ["q0", "q1", "q2", "q3", "q4", "loud"],
  );
  assert.equal(c.received, 0);
});

test("a long-polling fetch is answered as soon as data arrives from another connection", async (t) => {
  const { broker, server, client } = await startServer(t);
  await broker.createTopic("wait", 1);
  const consumer = await client();
  const producer = await client();
  const id = consumer.id();
  consumer.send(
    p.encodeFetchRequest(id, {
      topic: "wait",
      partition: 0,
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 30_000,
      minBytes: 1,
    }),
  );
  await until(() => broker.partition("wait", 0).waitingReaders === 1, "the fetch to wait");
  assert.equal(consumer.received, 0);
  const produced = producer.call((pid) =>
    p.encodeProduceRequest(pid, {
      topic: "wait",
      partition: 0,
      acks: 1,
      timeoutMs: 1000,
      records: batchOf(["hello"]),
    }),
  );
  const res = p.decodeFetchResponse(await consumer.response(id));
  assert.deepEqual(recordsOf(res.records), [[0, "hello"]]);
  await produced;
  assert.equal(server.connectionCount, 2);
});

test("a client that disconnects during a long poll: the wait is aborted at once and nothing is left", async (t) => {
  const { broker, server, client } = await startServer(t);
  await broker.createTopic("gone", 1);
  const c = await client();
  c.send(
    p.encodeFetchRequest(c.id(), {
      topic: "gone",
      partition: 0,
      offset: 0,
      maxBytes: 1024,
      maxWaitMs: 600_000,
      minBytes: 1,
    }),
  );
  const log = broker.partition("gone", 0);
  await until(() => log.waitingReaders === 1, "the fetch to wait");
  const conn = server.connections()[0]!;
  assert.equal(conn.inflight, 1);
  c.destroy();
  await conn.closed;
  // Without the abort the wait would hold for ten minutes.
  await until(() => log.waitingReaders === 0 && conn.inflight === 0, "the wait to be aborted");
  await until(() => server.connectionCount === 0, "the connection to be forgotten");
});

test("fetch responses carry the stored bytes: records of later batches keep their stamped offsets", async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("stamp", 1);
  const c = await client();
  for (const values of [["a"], ["b", "c"], ["d"]]) {
    await c.call((id) =>
      p.encodeProduceRequest(id, {
        topic: "stamp",
        partition: 0,
        acks: 1,
        timeoutMs: 0,
        records: batchOf(values),
      }),
    );
  }
  const res = p.decodeFetchResponse(
    await c.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "stamp",
        partition: 0,
        offset: 1,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    ),
  );
  // Whole batches from the one holding offset 1.
  assert.deepEqual(recordsOf(res.records), [
    [1, "b"],
    [2, "c"],
    [3, "d"],
  ]);
});

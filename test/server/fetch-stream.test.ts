/** Fetch streams on the wire: pushes, the credit window, keep-alives, cancel, errors and bounds. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, type TestClient, until } from "./helpers.js";

const KiB = 1024;

function streamRequest(over: Partial<p.FetchStreamRequest> & { topic: string }): p.FetchStreamRequest {
  return {
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 30_000,
    minBytes: 1,
    windowBytes: 1 << 20,
    group: "",
    memberId: "",
    generation: 0,
    ...over,
  };
}

function produce(c: TestClient, topic: string, values: string[]): Promise<Buffer> {
  return c.call((id) =>
    p.encodeProduceRequest(id, { topic, partition: 0, acks: 1, timeoutMs: 1000, records: batchOf(values) }),
  );
}

/** The next response of stream `id`, decoded. */
async function push(c: TestClient, id: number): Promise<p.FetchResponse> {
  return p.decodeFetchResponse(await c.response(id));
}

/** A few turns of the event loop and a little time, for responses that must not come. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

test("a stream pushes what is there, then each new batch, without another request", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("s", 1);
  const producer = await client();
  await produce(producer, "s", ["a", "b"]);
  const consumer = await client();
  const id = consumer.id();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "s", offset: 1 })));
  const first = await push(consumer, id);
  // Whole batches: the one holding offset 1 starts at 0.
  assert.deepEqual(recordsOf(first.records), [
    [0, "a"],
    [1, "b"],
  ]);
  assert.equal(first.highWatermark, 2);
  for (let i = 0; i < 5; i++) {
    await produce(producer, "s", [`m${i}`]);
    const next = await push(consumer, id);
    assert.deepEqual(recordsOf(next.records), [[2 + i, `m${i}`]]);
    assert.equal(next.highWatermark, 3 + i);
  }
  await settle();
  assert.equal(consumer.received, 0);
});

test("the window holds the stream until credit comes back; a full window still says it is alive", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("w", 1);
  const producer = await client();
  const consumer = await client();
  const batch = batchOf(["0123456789"]);
  const id = consumer.id();
  // Room for one batch; an empty response every 40 ms while the window is full.
  consumer.send(
    p.encodeFetchStreamRequest(id, streamRequest({ topic: "w", windowBytes: batch.length, maxWaitMs: 40 })),
  );
  for (let i = 0; i < 3; i++) await produce(producer, "w", ["0123456789"]);
  const first = await push(consumer, id);
  assert.deepEqual(recordsOf(first.records), [[0, "0123456789"]]);
  // Nothing more while no credit comes, but empty responses keep coming.
  for (let i = 0; i < 2; i++) {
    const alive = await push(consumer, id);
    assert.equal(alive.records.length, 0);
    assert.equal(alive.highWatermark, 1, "the last high watermark the stream saw");
  }
  consumer.send(p.encodeStreamCredit(consumer.id(), { streamId: id, bytes: batch.length }));
  const second = await push(consumer, id);
  assert.deepEqual(recordsOf(second.records), [[1, "0123456789"]]);
  // Credit beyond what was sent opens the window for what follows.
  consumer.send(p.encodeStreamCredit(consumer.id(), { streamId: id, bytes: 10 * batch.length }));
  let third = await push(consumer, id);
  while (third.records.length === 0) third = await push(consumer, id);
  assert.deepEqual(recordsOf(third.records), [[2, "0123456789"]]);
});

test("an idle stream answers empty every maxWaitMs", { timeout: 20_000 }, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("idle", 1);
  const consumer = await client();
  const id = consumer.id();
  const started = performance.now();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "idle", maxWaitMs: 30 })));
  for (let i = 0; i < 3; i++) {
    const res = await push(consumer, id);
    assert.equal(res.records.length, 0);
    assert.equal(res.highWatermark, 0);
  }
  assert.ok(performance.now() - started >= 80, "three waits of 30 ms");
});

test("cancel ends a stream at once: its wait is gone and nothing more is sent", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client, server } = await startServer(t);
  await broker.createTopic("c", 1);
  const log = broker.partition("c", 0);
  const consumer = await client();
  const conn = server.connections().at(-1)!;
  const id = consumer.id();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "c" })));
  await until(() => log.waitingReaders === 1 && conn.inflight === 1, "the stream to wait");
  consumer.send(p.encodeStreamCancel(consumer.id(), id));
  await until(() => log.waitingReaders === 0 && conn.inflight === 0, "the stream to end");
  const producer = await client();
  await produce(producer, "c", ["after"]);
  // Credit and a second cancel for the ended stream are ignored, and the connection still works.
  consumer.send(p.encodeStreamCredit(consumer.id(), { streamId: id, bytes: 100 }));
  consumer.send(p.encodeStreamCancel(consumer.id(), id));
  const res = p.decodeFetchResponse(
    await consumer.call((fid) =>
      p.encodeFetchRequest(fid, {
        topic: "c",
        partition: 0,
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    ),
  );
  assert.deepEqual(recordsOf(res.records), [[0, "after"]]);
  await settle();
  assert.equal(consumer.received, 0);
});

test("a closed connection ends its streams", { timeout: 20_000 }, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("gone", 1);
  const log = broker.partition("gone", 0);
  const consumer = await client();
  for (let i = 0; i < 3; i++) {
    consumer.send(p.encodeFetchStreamRequest(consumer.id(), streamRequest({ topic: "gone" })));
  }
  await until(() => log.waitingReaders === 3, "the streams to wait");
  consumer.destroy();
  await until(() => log.waitingReaders === 0, "the waits to end with the connection");
});

test("a stream ends with an error response: out of range, unknown partition, a deleted topic", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("e", 1);
  const consumer = await client();
  const outOfRange = await consumer.call((id) =>
    p.encodeFetchStreamRequest(id, streamRequest({ topic: "e", offset: 5 })),
  );
  assert.equal(p.responseError(outOfRange)?.code, ErrorCode.OFFSET_OUT_OF_RANGE);
  const noPartition = await consumer.call((id) =>
    p.encodeFetchStreamRequest(id, streamRequest({ topic: "e", partition: 3 })),
  );
  assert.equal(p.responseError(noPartition)?.code, ErrorCode.UNKNOWN_PARTITION);

  const id = consumer.id();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "e" })));
  await until(() => broker.partition("e", 0).waitingReaders === 1, "the stream to wait");
  await broker.deleteTopic("e");
  const deleted = await consumer.response(id);
  assert.equal(p.responseError(deleted)?.code, ErrorCode.UNKNOWN_TOPIC);
});

test("bad streams are refused: a zero window, wait or size, or an id already open", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("bad", 1);
  const consumer = await client();
  for (const over of [{ windowBytes: 0 }, { maxWaitMs: 0 }, { maxBytes: 0 }]) {
    const res = await consumer.call((id) =>
      p.encodeFetchStreamRequest(id, streamRequest({ topic: "bad", ...over })),
    );
    assert.equal(p.responseError(res)?.code, ErrorCode.INVALID_REQUEST, JSON.stringify(over));
  }
  const id = consumer.id();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "bad" })));
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "bad" })));
  const again = await consumer.response(id);
  assert.equal(p.responseError(again)?.code, ErrorCode.INVALID_REQUEST);
  assert.match(p.responseError(again)?.message ?? "", /already open/);
});

test("a client that stops reading holds its streams: the broker's pending bytes stay bounded", {
  timeout: 20_000,
}, async (t) => {
  const limit = 256 * KiB;
  const f = await startServer(t, { maxBatchBytes: 64 * KiB }, { maxInflightBytes: limit });
  const topics = ["t0", "t1", "t2", "t3"];
  for (const topic of topics) await f.broker.createTopic(topic, 1);
  const reader = await f.client();
  const conn = f.server.connections().at(-1)!;
  reader.socket.pause(); // reads nothing from here on
  const ids = topics.map((topic) => {
    const id = reader.id();
    // Windows far larger than the bound: only the connection's bound holds the streams back.
    reader.send(
      p.encodeFetchStreamRequest(id, streamRequest({ topic, maxBytes: 64 * KiB, windowBytes: 1 << 30 })),
    );
    return id;
  });
  await until(() => conn.inflight === topics.length, "the streams to open");
  const producer = await f.client();
  const value = "v".repeat(30 * KiB);
  let maxPending = 0;
  for (let i = 0; i < 40; i++) {
    for (const topic of topics) await produce(producer, topic, [value]);
    maxPending = Math.max(maxPending, conn.pendingBytes);
  }
  await settle();
  maxPending = Math.max(maxPending, conn.pendingBytes);
  // 40 x 4 x 30 KiB = 4.7 MiB produced; the broker holds at most its bound and one response more.
  assert.ok(maxPending <= limit + 64 * KiB + 200, `pending ${maxPending} bytes`);

  // Once the client reads, every record arrives, in order, on every stream.
  reader.socket.resume();
  for (const [k, id] of ids.entries()) {
    let next = 0;
    while (next < 40) {
      const res = await push(reader, id);
      for (const [offset] of recordsOf(res.records)) assert.equal(offset, next++, `stream ${k}`);
      reader.send(p.encodeStreamCredit(reader.id(), { streamId: id, bytes: res.records.length }));
    }
  }
});

test("a group member's stream ends once the member no longer owns the partition", {
  timeout: 20_000,
}, async (t) => {
  const { broker, client } = await startServer(t);
  await broker.createTopic("owned", 1);
  const joined = await broker.groups.join({
    group: "g",
    memberId: "",
    clientId: "test",
    topics: ["owned"],
    strategy: "range",
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
  });
  const member = { group: "g", memberId: joined.memberId, generation: joined.generation };
  const consumer = await client();
  const stale = await consumer.call((id) =>
    p.encodeFetchStreamRequest(
      id,
      streamRequest({ topic: "owned", ...member, generation: member.generation + 1 }),
    ),
  );
  assert.equal(p.responseError(stale)?.code, ErrorCode.ILLEGAL_GENERATION);

  const id = consumer.id();
  consumer.send(p.encodeFetchStreamRequest(id, streamRequest({ topic: "owned", ...member })));
  const producer = await client();
  await produce(producer, "owned", ["mine"]);
  assert.deepEqual(recordsOf((await push(consumer, id)).records), [[0, "mine"]]);
  await until(() => broker.partition("owned", 0).waitingReaders === 1, "the next round to wait");
  broker.groups.leave("g", member.memberId);
  // The round under way began as the owner and is answered; the next one is refused.
  await produce(producer, "owned", ["after"]);
  assert.deepEqual(recordsOf((await push(consumer, id)).records), [[1, "after"]]);
  const ended = await consumer.response(id);
  assert.equal(p.responseError(ended)?.code, ErrorCode.UNKNOWN_MEMBER);
});

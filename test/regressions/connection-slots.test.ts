/**
 * Connection slots cannot be held by clients that do nothing: idle connections are closed after
 * idleTimeoutMs, a frame trickled in slower than frameTimeoutMs closes its connection, and one IP
 * address gets at most maxConnectionsPerIp connections. Waiting on a long poll or a fetch stream is
 * not idleness.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, TestClient } from "../server/helpers.js";

function produce(c: TestClient, topic: string, values: string[]): Promise<Buffer> {
  return c.call((id) =>
    p.encodeProduceRequest(id, { topic, partition: 0, acks: 1, timeoutMs: 0, records: batchOf(values) }),
  );
}

test("an idle connection is closed; one waiting on a long poll or a stream is not", {
  timeout: 20_000,
}, async (t) => {
  const f = await startServer(t, {}, { idleTimeoutMs: 150 });
  await f.broker.createTopic("idle", 1);
  const poller = await f.client();
  const streamer = await f.client();
  const pollId = poller.id();
  poller.send(
    p.encodeFetchRequest(pollId, {
      topic: "idle",
      partition: 0,
      offset: 0,
      maxBytes: 1024,
      maxWaitMs: 60_000,
      minBytes: 1,
    }),
  );
  const streamId = streamer.id();
  streamer.send(
    p.encodeFetchStreamRequest(streamId, {
      topic: "idle",
      partition: 0,
      offset: 0,
      maxBytes: 1024,
      maxWaitMs: 60_000,
      minBytes: 1,
      windowBytes: 1 << 20,
      group: "",
      memberId: "",
      generation: 0,
    }),
  );
  // Several idle periods pass: the silent connections go, one after another.
  for (let i = 0; i < 3; i++) {
    const idle = await f.client();
    await idle.closed;
  }
  assert.equal(poller.isClosed, false, "a connection with a long poll is not idle");
  assert.equal(streamer.isClosed, false, "a connection with a fetch stream is not idle");
  const producer = await f.client();
  await produce(producer, "idle", ["woke"]);
  assert.deepEqual(recordsOf(p.decodeFetchResponse(await poller.response(pollId)).records), [[0, "woke"]]);
  assert.deepEqual(recordsOf(p.decodeFetchResponse(await streamer.response(streamId)).records), [
    [0, "woke"],
  ]);
});

test("a frame trickled in byte by byte is cut off after frameTimeoutMs; other clients are served", {
  timeout: 20_000,
}, async (t) => {
  const f = await startServer(t, {}, { frameTimeoutMs: 200, idleTimeoutMs: 60_000 });
  await f.broker.createTopic("slow", 1);
  const well = await f.client();
  const slow = await f.client();
  // A 1 KiB frame, one byte every 10 ms: it would take 10 s to arrive.
  const frame = p.encodeProduceRequest(slow.id(), {
    topic: "slow",
    partition: 0,
    acks: 1,
    timeoutMs: 0,
    records: batchOf(["x".repeat(1000)]),
  });
  let sent = 0;
  const trickle = setInterval(() => {
    if (sent < frame.length && !slow.isClosed) slow.send(frame.subarray(sent, ++sent));
  }, 10);
  t.after(() => clearInterval(trickle));
  await produce(well, "slow", ["meanwhile"]);
  await slow.closed;
  assert.ok(sent < frame.length, `closed before the frame was complete (${sent} of ${frame.length} bytes)`);
  await produce(well, "slow", ["after"]);
});

test("one IP address gets at most maxConnectionsPerIp connections", { timeout: 20_000 }, async (t) => {
  const f = await startServer(t, {}, { maxConnectionsPerIp: 2, maxConnections: 100 });
  const a = await f.client();
  await f.client();
  const third = await f.rawClient();
  const refused = await third.call((id) =>
    p.encodeHandshakeRequest(id, { minVersion: 1, maxVersion: 1, clientId: "third" }),
  );
  assert.equal(p.responseError(refused)?.code, ErrorCode.TOO_MANY_CONNECTIONS);
  await third.closed;
  a.destroy();
  await a.closed;
  // The slot is free again once the server has seen the close.
  for (let i = 0; ; i++) {
    const next = await TestClient.connect(f.port);
    const r = await next.call((id) =>
      p.encodeHandshakeRequest(id, { minVersion: 1, maxVersion: 1, clientId: "next" }),
    );
    next.destroy();
    if (p.responseError(r) === null) break;
    assert.ok(i < 100, "a freed slot is taken again");
    await new Promise((resolve) => setImmediate(resolve));
  }
});

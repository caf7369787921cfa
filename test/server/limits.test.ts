/** Backpressure, the connection limit and graceful shutdown. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, TestClient, until } from "./helpers.js";

const KiB = 1024;

test("a client that does not read its responses is throttled: pending bytes stay bounded", async (t) => {
  const limit = 256 * KiB;
  const fetchBytes = 128 * KiB;
  const f = await startServer(t, { maxBatchBytes: 64 * KiB }, { maxInflightBytes: limit });
  await f.broker.createTopic("big", 1);
  const producer = await f.client();
  const value = "v".repeat(30 * KiB);
  for (let i = 0; i < 8; i++) {
    await producer.call((id) =>
      p.encodeProduceRequest(id, {
        topic: "big",
        partition: 0,
        acks: 1,
        timeoutMs: 0,
        records: batchOf([value]),
      }),
    );
  }

  const reader = await f.client();
  const conn = f.server.connections().at(-1)!;
  reader.socket.pause(); // reads nothing from here on
  const n = 400; // 400 responses of ~120 KiB: ~48 MiB, far more than socket buffers hold
  const ids: number[] = [];
  const requests: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const id = reader.id();
    ids.push(id);
    requests.push(
      p.encodeFetchRequest(id, {
        topic: "big",
        partition: 0,
        offset: 0,
        maxBytes: fetchBytes,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    );
  }
  reader.send(Buffer.concat(requests));

  let maxPending = 0;
  const sample = (): boolean => {
    maxPending = Math.max(maxPending, conn.pendingBytes);
    return conn.paused && conn.inflight === 0;
  };
  // Settles with reading paused, nothing in progress, and the responses stuck in the socket.
  await until(sample, "the connection to pause");
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    sample();
  }
  assert.ok(conn.paused);
  assert.ok(maxPending <= limit + fetchBytes + 200, `pending ${maxPending} bytes`);

  // Once the client reads, every request is answered, in order.
  reader.socket.resume();
  for (const id of ids) {
    const res = p.decodeFetchResponse(await reader.response(id));
    assert.equal(recordsOf(res.records).length, 4);
  }
  assert.ok(maxPending <= limit + fetchBytes + 200, `pending ${maxPending} bytes`);
});

test("connections over the limit are answered TOO_MANY_CONNECTIONS and closed", async (t) => {
  const f = await startServer(t, {}, { maxConnections: 2 });
  const a = await f.client();
  await f.client();
  const c = await f.rawClient();
  const res = await c.call((id) =>
    p.encodeHandshakeRequest(id, { minVersion: 1, maxVersion: 1, clientId: "third" }),
  );
  assert.equal(p.responseError(res)?.code, ErrorCode.TOO_MANY_CONNECTIONS);
  await c.closed;
  a.destroy();
  await until(() => f.server.connectionCount === 1, "the closed connection to be forgotten");
  await f.client(); // room again
});

test("a connection that never handshakes is closed", async (t) => {
  const f = await startServer(t, {}, { handshakeTimeoutMs: 50 });
  const c = await f.rawClient();
  await c.closed;
  assert.equal(c.received, 0);
});

test("graceful shutdown: long polls are answered, then connections close and new ones are refused", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("stop", 1);
  const c = await f.client();
  const id = c.id();
  c.send(
    p.encodeFetchRequest(id, {
      topic: "stop",
      partition: 0,
      offset: 0,
      maxBytes: 1024,
      maxWaitMs: 600_000,
      minBytes: 1,
    }),
  );
  await until(() => f.broker.partition("stop", 0).waitingReaders === 1, "the fetch to wait");
  await f.server.close();
  const res = p.decodeFetchResponse(await c.response(id));
  assert.equal(res.records.length, 0);
  await c.closed;
  await assert.rejects(TestClient.connect(f.port));
});

test("shutdown drops connections still busy after the timeout", async (t) => {
  const handlers = [...(await import("../../src/server/dispatch.js")).defaultHandlers()];
  handlers[p.ApiKey.LIST_TOPICS] = { version: 1, handle: () => new Promise<null>(() => {}) };
  const f = await startServer(t, {}, { handlers, shutdownTimeoutMs: 50 });
  const c = await f.client();
  c.send(p.encodeListTopicsRequest(c.id()));
  await until(() => f.server.connections()[0]?.inflight === 1, "the request to start");
  await f.server.close();
  await c.closed;
  assert.equal(c.received, 0);
});

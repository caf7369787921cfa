/**
 * Bad input from one client: errors are answered and the connection stays, or the connection is
 * closed cleanly, and well-behaved clients on other connections are never affected.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry } from "../../src/server/handler.js";
import { batchOf, type Fixture, startServer, type TestClient } from "./helpers.js";

/** A request frame with any header and body, size field included. */
function frame(
  apiKey: number,
  version: number,
  correlationId: number,
  body: Buffer = Buffer.alloc(0),
): Buffer {
  const b = Buffer.alloc(12 + body.length);
  b.writeUInt32BE(8 + body.length, 0);
  b.writeUInt16BE(apiKey, 4);
  b.writeUInt16BE(version, 6);
  b.writeUInt32BE(correlationId, 8);
  body.copy(b, 12);
  return b;
}

async function errorCodeOf(c: TestClient, bytes: Buffer, correlationId: number): Promise<number | undefined> {
  c.send(bytes);
  return p.responseError(await c.response(correlationId))?.code;
}

/** A well-behaved client still gets produce and fetch answered. */
async function stillServes(f: Fixture, well: TestClient): Promise<void> {
  await f.broker.createTopic(`ok-${well.id()}`, 1).catch(() => {});
  const topics = p.decodeListTopicsResponse(await well.call((id) => p.encodeListTopicsRequest(id))).topics;
  const topic = topics.find((x) => x.startsWith("ok-"));
  assert.ok(topic);
  const res = p.decodeProduceResponse(
    await well.call((id) =>
      p.encodeProduceRequest(id, { topic, partition: 0, acks: 1, timeoutMs: 0, records: batchOf(["fine"]) }),
    ),
  );
  assert.ok(res.lastOffset >= 0);
}

test("unknown api, unsupported version and malformed bodies are answered, and the connection stays", async (t) => {
  const f = await startServer(t);
  const c = await f.client();
  assert.equal(await errorCodeOf(c, frame(18, 1, 1), 1), ErrorCode.UNKNOWN_API);
  assert.equal(await errorCodeOf(c, frame(999, 1, 2), 2), ErrorCode.UNKNOWN_API);
  assert.equal(await errorCodeOf(c, frame(p.ApiKey.LIST_TOPICS, 2, 3), 3), ErrorCode.UNSUPPORTED_VERSION);
  // A DeleteTopic whose string length runs past the end of the frame.
  assert.equal(
    await errorCodeOf(c, frame(p.ApiKey.DELETE_TOPIC, 1, 4, Buffer.from([0, 9, 0x61])), 4),
    ErrorCode.MALFORMED_REQUEST,
  );
  // A ListTopics with a stray body byte.
  assert.equal(
    await errorCodeOf(c, frame(p.ApiKey.LIST_TOPICS, 1, 5, Buffer.from([1])), 5),
    ErrorCode.MALFORMED_REQUEST,
  );
  // acks 4 is well-formed but not acceptable.
  const bad = p.encodeProduceRequest(6, {
    topic: "t",
    partition: 0,
    acks: 1,
    timeoutMs: 0,
    records: batchOf(["x"]),
  });
  bad[12 + 2 + 1 + 4] = 4;
  assert.equal(await errorCodeOf(c, bad, 6), ErrorCode.INVALID_REQUEST);
  // A corrupt batch is refused whole.
  await f.broker.createTopic("t", 1);
  const corrupt = batchOf(["x"]);
  corrupt[corrupt.length - 1]! ^= 0xff;
  assert.equal(
    await errorCodeOf(
      c,
      p.encodeProduceRequest(7, { topic: "t", partition: 0, acks: 1, timeoutMs: 0, records: corrupt }),
      7,
    ),
    ErrorCode.CORRUPT_BATCH,
  );
  assert.equal(f.broker.partition("t", 0).logEndOffset, 0);
  assert.equal(c.isClosed, false);
  await stillServes(f, c);
});

test("a request before the handshake is answered HANDSHAKE_REQUIRED and the connection closed", async (t) => {
  const f = await startServer(t);
  const c = await f.rawClient();
  assert.equal(await errorCodeOf(c, p.encodeListTopicsRequest(1), 1), ErrorCode.HANDSHAKE_REQUIRED);
  await c.closed;
});

test("a handshake with no common version is refused and may be retried", async (t) => {
  const f = await startServer(t);
  const c = await f.rawClient();
  assert.equal(
    await errorCodeOf(
      c,
      p.encodeHandshakeRequest(1, {
        minVersion: p.PROTOCOL_MAX_VERSION + 1,
        maxVersion: p.PROTOCOL_MAX_VERSION + 4,
        clientId: "future",
      }),
      1,
    ),
    ErrorCode.UNSUPPORTED_VERSION,
  );
  const res = p.decodeHandshakeResponse(
    await c.call((id) =>
      p.encodeHandshakeRequest(id, { minVersion: 1, maxVersion: p.PROTOCOL_MAX_VERSION + 1, clientId: "x" }),
    ),
  );
  assert.equal(res.version, p.PROTOCOL_MAX_VERSION);
  assert.equal(res.maxBatchBytes, f.broker.config.maxBatchBytes);
  assert.equal(res.maxFrameBytes, f.broker.config.maxBatchBytes + p.FRAME_OVERHEAD_BYTES);
});

test("an oversized frame closes only that connection, before its body is sent", async (t) => {
  const f = await startServer(t, { maxBatchBytes: 64 * 1024 });
  const well = await f.client();
  const bad = await f.client();
  const size = Buffer.alloc(4);
  size.writeUInt32BE(f.server.limits.maxFrameBytes + 1);
  bad.send(size); // only the size field: the server must not wait for the body
  await bad.closed;
  await stillServes(f, well);
});

test("a frame too short for a request header closes the connection", async (t) => {
  const f = await startServer(t);
  const well = await f.client();
  const bad = await f.client();
  bad.send(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
  await bad.closed;
  await stillServes(f, well);
});

test("a truncated frame followed by the client ending closes cleanly", async (t) => {
  const f = await startServer(t);
  const well = await f.client();
  const bad = await f.client();
  const whole = p.encodeListTopicsRequest(77);
  bad.socket.end(whole.subarray(0, 7));
  await bad.closed;
  await stillServes(f, well);
});

test("a client that ends after pipelining still gets every answer", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("half", 1);
  const c = await f.client();
  const ids = [c.id(), c.id(), c.id()];
  c.socket.end(
    Buffer.concat(
      ids.map((id) =>
        p.encodeProduceRequest(id, {
          topic: "half",
          partition: 0,
          acks: 1,
          timeoutMs: 0,
          records: batchOf(["h"]),
        }),
      ),
    ),
  );
  for (const [i, id] of ids.entries()) {
    assert.equal(p.decodeProduceResponse(await c.response(id)).baseOffset, i);
  }
  await c.closed;
});

test("a handler that throws or rejects unexpectedly is answered INTERNAL and the connection stays", async (t) => {
  const handlers = [...defaultHandlers()];
  const throws: HandlerEntry = {
    version: 1,
    handle: () => {
      throw new TypeError("boom");
    },
  };
  const rejects: HandlerEntry = { version: 1, handle: () => Promise.reject(new Error("later boom")) };
  handlers[p.ApiKey.LIST_TOPICS] = throws;
  handlers[p.ApiKey.DESCRIBE_TOPIC] = rejects;
  const f = await startServer(t, {}, { handlers });
  const c = await f.client();
  const a = p.decodeErrorResponse(await c.call((id) => p.encodeListTopicsRequest(id)));
  assert.equal(a.code, ErrorCode.INTERNAL);
  assert.doesNotMatch(a.message, /boom/); // internals stay in the log
  const b = p.decodeErrorResponse(await c.call((id) => p.encodeDescribeTopicRequest(id, { topic: "x" })));
  assert.equal(b.code, ErrorCode.INTERNAL);
  p.decodeCreateTopicResponse(
    await c.call((id) => p.encodeCreateTopicRequest(id, { topic: "after", partitions: 1, configs: {} })),
  );
});

test("fuzz: garbage from many clients never disturbs a well-behaved one", async (t) => {
  const f = await startServer(t, { maxBatchBytes: 4096 });
  const well = await f.client();
  await fc.assert(
    fc.asyncProperty(
      fc.boolean(),
      fc.array(fc.uint8Array({ minLength: 1, maxLength: 64 }), { minLength: 1, maxLength: 6 }),
      async (handshake, chunks) => {
        const bad = handshake ? await f.client() : await f.rawClient();
        for (const c of chunks) bad.send(Buffer.from(c));
        // Whatever the garbage did (answered, closed, or waiting for more bytes), end it.
        bad.socket.end();
        await bad.closed;
        await stillServes(f, well);
      },
    ),
    { numRuns: 40 },
  );
  assert.equal(well.isClosed, false);
});

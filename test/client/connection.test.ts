import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { parseAddress } from "../../src/client/address.js";
import { Connection, type ConnectionOptions } from "../../src/client/connection.js";
import { ConnectionManager } from "../../src/client/connection-manager.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import {
  decodeListTopicsResponse,
  encodeListTopicsRequest,
  encodeListTopicsResponse,
} from "../../src/protocol/list-topics.js";
import { encodeProduceRequestHeader } from "../../src/protocol/produce.js";
import { FakeBroker, type FakeRequest } from "./fake-broker.js";

const options: ConnectionOptions = { clientId: "test", connectTimeoutMs: 5000, requestTimeoutMs: 5000 };

function listTopics(conn: Connection | ConnectionManager, signal?: AbortSignal): Promise<string[]> {
  return conn
    .request((id: number) => encodeListTopicsRequest(id), undefined, decodeListTopicsResponse, { signal })
    .then((r) => r.topics);
}

function answer(req: FakeRequest, topics: string[]): void {
  req.conn.socket.write(encodeListTopicsResponse(req.correlationId, { topics }));
}

async function open(fake: FakeBroker, o: Partial<ConnectionOptions> = {}): Promise<Connection> {
  return Connection.open(parseAddress(fake.address), { ...options, ...o });
}

async function rejectsWith(p: Promise<unknown>, code: number): Promise<ConchError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ConchError, `not a ConchError: ${err}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail("expected a rejection");
}

test("responses that come back out of order reach their own requests", async (t) => {
  const fake = await FakeBroker.start(t);
  const conn = await open(fake);
  t.after(() => conn.close());
  assert.equal(conn.maxBatchBytes, 4 << 20, "limits come from the handshake");
  const results = [listTopics(conn), listTopics(conn), listTopics(conn)];
  await fake.waitForRequests(3);
  const [a, b, c] = fake.requests as [FakeRequest, FakeRequest, FakeRequest];
  assert.equal(new Set([a.correlationId, b.correlationId, c.correlationId]).size, 3);
  answer(c, ["third"]);
  answer(a, ["first"]);
  answer(b, ["second"]);
  assert.deepEqual(await Promise.all(results), [["first"], ["second"], ["third"]]);
  assert.equal(conn.inFlight, 0);
});

test("an error response becomes a ConchError with the broker's code; the connection stays up", async (t) => {
  const fake = await FakeBroker.start(t, (req) => {
    if (fake.requests.length === 1)
      req.conn.error(req.correlationId, ErrorCode.UNKNOWN_TOPIC, "no such topic");
    else answer(req, ["ok"]);
  });
  const conn = await open(fake);
  t.after(() => conn.close());
  const err = await rejectsWith(listTopics(conn), ErrorCode.UNKNOWN_TOPIC);
  assert.equal(err.message, "no such topic");
  assert.equal(err.retriable, false);
  assert.deepEqual(await listTopics(conn), ["ok"]);
});

test("requests in flight when the connection drops fail with a retriable CONNECTION_CLOSED", async (t) => {
  const fake = await FakeBroker.start(t);
  const conn = await open(fake);
  let closedWith: ConchError | null = null;
  conn.onClose((e) => {
    closedWith = e;
  });
  const a = listTopics(conn);
  const b = listTopics(conn);
  await fake.waitForRequests(2);
  fake.dropConnections();
  const errA = await rejectsWith(a, ErrorCode.CONNECTION_CLOSED);
  await rejectsWith(b, ErrorCode.CONNECTION_CLOSED);
  assert.equal(errA.retriable, true);
  assert.ok(conn.closed);
  assert.ok(closedWith !== null);
  await rejectsWith(listTopics(conn), ErrorCode.CONNECTION_CLOSED);
});

test("an aborted request rejects with ABORTED and its late response is ignored", async (t) => {
  const fake = await FakeBroker.start(t);
  const conn = await open(fake);
  t.after(() => conn.close());
  const ac = new AbortController();
  const aborted = listTopics(conn, ac.signal);
  await fake.waitForRequests(1);
  ac.abort();
  await rejectsWith(aborted, ErrorCode.ABORTED);
  answer(fake.requests[0]!, ["late"]);
  const next = listTopics(conn);
  await fake.waitForRequests(2);
  answer(fake.requests[1]!, ["fresh"]);
  assert.deepEqual(await next, ["fresh"]);
  await rejectsWith(listTopics(conn, AbortSignal.abort()), ErrorCode.ABORTED);
});

test("requests sharing a signal share one abort listener; aborting fails only theirs", async (t) => {
  const fake = await FakeBroker.start(t, (req) => {
    // Answers only the requests made without a signal (the odd ids after the handshake's 1).
    if (req.correlationId % 2 === 1) answer(req, ["answered"]);
  });
  const conn = await open(fake);
  t.after(() => conn.close());
  const ac = new AbortController();
  const waiting: Promise<string[]>[] = [];
  const answered: Promise<string[]>[] = [];
  for (let i = 0; i < 50; i++) {
    waiting.push(listTopics(conn, ac.signal));
    answered.push(listTopics(conn));
  }
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  for (const a of await Promise.all(answered)) assert.deepEqual(a, ["answered"]);
  assert.equal(conn.inFlight, 50);
  ac.abort();
  for (const w of waiting) await rejectsWith(w, ErrorCode.ABORTED);
  assert.equal(conn.inFlight, 0);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
});

test("a response larger than the handshake's maxFrameBytes closes the connection", async (t) => {
  const fake = await FakeBroker.start(t, (req) => answer(req, ["x".repeat(3000)]), { maxFrameBytes: 1024 });
  const conn = await open(fake);
  const err = await rejectsWith(listTopics(conn), ErrorCode.CONNECTION_CLOSED);
  assert.equal((err.cause as ConchError).code, ErrorCode.FRAME_TOO_LARGE);
  assert.ok(conn.closed);
});

test("a broker that stops answering times the request out and closes the connection", async (t) => {
  const fake = await FakeBroker.start(t);
  const conn = await open(fake, { requestTimeoutMs: 100 });
  const err = await rejectsWith(listTopics(conn), ErrorCode.TIMEOUT);
  assert.ok(err.retriable);
  assert.ok(conn.closed);
});

test("writes queue behind a full socket and all arrive, in order, once the broker reads again", async (t) => {
  const fake = await FakeBroker.start(t, (req) => answer(req, [String(req.frame.length)]));
  const conn = await open(fake);
  t.after(() => conn.close());
  await fake.waitForRequests(0);
  // Stop the broker reading so the client's socket fills up.
  const pauseAll = () => {
    for (const c of fake.connections) c.socket.pause();
  };
  pauseAll();
  const tail = Buffer.alloc(512 * 1024, 7);
  const encode = (id: number) => encodeProduceRequestHeader(id, "t", 0, 1, 1000, tail.length);
  const sent: Array<Promise<string[]>> = [];
  for (let i = 0; i < 40; i++) {
    sent.push(
      new Promise<string[]>((resolve, reject) =>
        conn.requestTo(
          encode,
          undefined,
          decodeListTopicsResponse,
          { responded: (r) => resolve(r.topics), requestFailed: reject },
          i,
          undefined,
          tail,
        ),
      ),
    );
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(fake.requests.length < 40, "the broker is not reading, so not everything can have arrived");
  for (const c of fake.connections) c.socket.resume();
  const results = await Promise.all(sent);
  const expected = String(8 + 2 + 1 + 4 + 1 + 4 + 4 + tail.length);
  assert.ok(
    results.every((r) => r[0] === expected),
    "every frame arrived whole",
  );
  assert.equal(fake.requests.length, 40);
});

test("the manager reconnects after the broker drops the connection, and tries every address", async (t) => {
  const fake = await FakeBroker.start(t, (req) => answer(req, ["ok"]));
  // A closed port first: the manager must move on to the next address.
  const dead = await FakeBroker.start(t);
  const deadAddress = dead.address;
  await dead.close();
  const manager = new ConnectionManager({
    ...options,
    brokers: [deadAddress, fake.address],
    reconnectBackoffMs: 5,
    reconnectBackoffMaxMs: 20,
  });
  t.after(() => manager.close());
  assert.deepEqual(await listTopics(manager), ["ok"]);
  const first = manager.current!;
  const noticed = new Promise<void>((resolve) => first.onClose(() => resolve()));
  fake.dropConnections();
  await noticed;
  assert.equal(manager.current, null);
  assert.deepEqual(await listTopics(manager), ["ok"]);
  assert.ok(manager.current !== null && manager.current !== first, "a new connection");
  assert.equal(fake.connections.length, 2);
});

test("with no broker reachable a request fails after the request timeout; close() fails waiters", async (t) => {
  const dead = await FakeBroker.start(t);
  const address = dead.address;
  await dead.close();
  const manager = new ConnectionManager({
    ...options,
    requestTimeoutMs: 200,
    brokers: [address],
    reconnectBackoffMs: 5,
    reconnectBackoffMaxMs: 20,
  });
  const err = await rejectsWith(listTopics(manager), ErrorCode.CONNECTION_CLOSED);
  assert.match(
    err.message,
    /^connection closed: no broker reachable within 200 ms \(last attempt: cannot connect to /,
  );
  assert.equal(err.message.split("connection closed").length, 2, `said once: ${err.message}`);
  const waiting = listTopics(manager);
  manager.close();
  await rejectsWith(waiting, ErrorCode.CONNECTION_CLOSED);
});

test("a broker speaking another protocol version is refused", async (t) => {
  const { createServer } = await import("node:net");
  const { encodeHandshakeResponse } = await import("../../src/protocol/handshake.js");
  const server = createServer((s) => {
    s.once("data", (chunk: Buffer) => {
      s.write(
        encodeHandshakeResponse(chunk.readUInt32BE(8), {
          version: 9,
          maxFrameBytes: 1 << 20,
          maxBatchBytes: 1 << 19,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  await rejectsWith(Connection.open({ host: "127.0.0.1", port }, options), ErrorCode.UNSUPPORTED_VERSION);
});

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { Producer } from "../../src/client/producer.js";
import { ConchError } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { FakeBroker } from "../client/fake-broker.js";

/** A port on 127.0.0.1 where nothing listens (it did a moment ago). */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

/** Sends one message and returns how it failed and after how long. */
async function failedSend(producer: Producer): Promise<{ err: ConchError; ms: number }> {
  const start = performance.now();
  const err = await producer.send("t", { value: "v", partition: 0 }).then(
    () => assert.fail("the send succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConchError, String(err));
  return { err, ms: performance.now() - start };
}

test("send() to an address where nothing listens settles within deliveryTimeoutMs, not requestTimeoutMs, and says why", async (t) => {
  const producer = new Producer(
    { brokers: [await deadAddress()], requestTimeoutMs: 10_000, reconnectBackoffMs: 20 },
    { deliveryTimeoutMs: 400 },
  );
  t.after(() => producer.close());
  const { err, ms } = await failedSend(producer);
  assert.ok(ms >= 390 && ms < 2000, `settled after ${Math.round(ms)} ms`);
  assert.equal(err.codeName, "TIMEOUT");
  assert.match(err.message, /deliveryTimeoutMs \(400 ms\)/);
  assert.match(err.message, /1 attempt to send/);
  assert.match(err.message, /no connection to 127\.0\.0\.1:\d+ \(connection closed: cannot connect/);
});

test("send() to a broker that stops with the request in flight settles within deliveryTimeoutMs, counting attempts", async (t) => {
  const fake = await FakeBroker.start(t);
  const producer = new Producer(
    { brokers: [fake.address], requestTimeoutMs: 10_000, reconnectBackoffMs: 20 },
    { deliveryTimeoutMs: 600 },
  );
  t.after(() => producer.close());
  const result = failedSend(producer);
  await fake.waitForRequests(1);
  assert.equal(fake.requests[0]!.apiKey, ApiKey.PRODUCE);
  await fake.close();
  const { err, ms } = await result;
  assert.ok(ms >= 590 && ms < 2500, `settled after ${Math.round(ms)} ms`);
  assert.equal(err.codeName, "TIMEOUT");
  assert.match(err.message, /deliveryTimeoutMs \(600 ms\)/);
  assert.match(err.message, /2 attempts to send its batch; the last failed with CONNECTION_CLOSED/);
});

test("a send waiting for the topic's partition count is failed at its delivery deadline too", async (t) => {
  const producer = new Producer(
    { brokers: [await deadAddress()], requestTimeoutMs: 10_000, reconnectBackoffMs: 20 },
    { deliveryTimeoutMs: 300 },
  );
  t.after(() => producer.close());
  const start = performance.now();
  const err = await producer.send("t", { value: "keyless" }).catch((e: unknown) => e);
  const ms = performance.now() - start;
  assert.ok(err instanceof ConchError);
  assert.ok(ms >= 290 && ms < 2000, `settled after ${Math.round(ms)} ms`);
  assert.equal(err.codeName, "TIMEOUT");
  assert.match(err.message, /still waiting for the topic's partition count, never sent/);
});

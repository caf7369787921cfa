/**
 * Clients that pipeline fetches and never read cannot together hold more than the server's
 * maxQueuedResponseBytes (each one alone was bounded, but 32 of them took the broker to 2.7 GB).
 * Their fetches wait for the total to drain and resume when it does, and a client that reads its
 * responses is served all the while.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveBrokerConfig } from "../../src/broker/broker-config.js";
import * as p from "../../src/protocol/index.js";
import { resolveLimits } from "../../src/server/server-options.js";
import { batchOf, type Fixture, recordsOf, startServer, type TestClient, until } from "../server/helpers.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** A fetch of up to 256 KiB from the start of "big", answered at once. */
function bigFetch(id: number): Buffer {
  return p.encodeFetchRequest(id, {
    topic: "big",
    partition: 0,
    offset: 0,
    maxBytes: 256 * KiB,
    maxWaitMs: 0,
    minBytes: 0,
  });
}

/** Creates "big" and produces `batches` batches of one `valueBytes` record. */
async function fill(f: Fixture, batches: number, valueBytes: number): Promise<void> {
  await f.broker.createTopic("big", 1);
  const producer = await f.client();
  const records = batchOf(["v".repeat(valueBytes)]);
  for (let i = 0; i < batches; i++) {
    await producer.call((id) =>
      p.encodeProduceRequest(id, { topic: "big", partition: 0, acks: 1, timeoutMs: 0, records }),
    );
  }
}

function fetchAll(c: TestClient, count: number): number[] {
  const ids: number[] = [];
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const id = c.id();
    ids.push(id);
    frames.push(bigFetch(id));
  }
  c.send(Buffer.concat(frames));
  return ids;
}

test("non-reading fetchers stay under maxQueuedResponseBytes together; a reading client is served", {
  timeout: 60_000,
}, async (t) => {
  const cap = 8 * MiB;
  let released = 0;
  const f = await startServer(
    t,
    { maxBatchBytes: 64 * KiB },
    {
      maxInflightBytes: 4 * MiB,
      maxQueuedResponseBytes: cap,
      maxFetchBytes: 256 * KiB,
      releaseMemory: () => released++,
    },
  );
  await fill(f, 8, 30 * KiB);

  // 12 clients x 100 fetches of ~240 KiB: 12 x 4 MiB held without a shared bound.
  const hogs: TestClient[] = [];
  const pending: number[][] = [];
  for (let i = 0; i < 12; i++) {
    const c = await f.client();
    c.socket.pause();
    hogs.push(c);
    pending.push(fetchAll(c, 100));
  }
  // A connection that held nothing when the bound was reached may still take one small fetch
  // (64 KiB, plus the whole first batch and its request's 4 KiB).
  const slack = hogs.length * (64 + 64 + 4) * KiB;
  let most = 0;
  const sample = (): void => {
    most = Math.max(most, f.server.queuedResponseBytes);
  };
  // Settled: every hog's reading is paused (by its own bound or by the shared one), unless the
  // bound does not hold.
  await until(() => {
    sample();
    const paused = f.server.connections().filter((c) => c.paused).length;
    return paused >= hogs.length || most > cap + slack;
  }, "the non-reading clients to be paused");
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    sample();
  }
  assert.ok(most <= cap + slack, `queued ${most} bytes, bound ${cap} + ${slack}`);
  assert.ok(most >= cap / 2, `the test reaches the bound (${most} of ${cap})`);

  // A client that reads is served while the bound is reached.
  const reader = await f.client();
  const got = p.decodeFetchResponse(await reader.call(bigFetch));
  assert.ok(recordsOf(got.records).length >= 1);

  // The first hog starts reading: its waiting fetches resume as the total drains, all answered.
  const late = hogs[0]!;
  late.socket.resume();
  for (const id of pending[0]!) await late.response(id);
  sample();
  assert.ok(most <= cap + slack, `queued ${most} bytes, bound ${cap} + ${slack}`);

  // When the hogs leave, nothing they held stays charged.
  for (const c of hogs) c.destroy();
  await until(() => f.server.connectionCount === 2, "the hogs to be gone");
  await until(() => f.server.queuedResponseBytes === 0, "the charge to go");
  // ...and the memory they held is given back (a second later: more may be leaving).
  await until(() => released > 0, "releaseMemory to be called", 1000);
  assert.equal(released, 1);
});

test("non-reading fetch streams stay under maxQueuedResponseBytes together", {
  timeout: 60_000,
}, async (t) => {
  const cap = 8 * MiB;
  const f = await startServer(
    t,
    { maxBatchBytes: 64 * KiB },
    { maxInflightBytes: 4 * MiB, maxQueuedResponseBytes: cap, maxFetchBytes: 256 * KiB },
  );
  // 10 MB in the topic: more than the kernel's socket buffers take, so each stream fills its
  // connection's own bound.
  await fill(f, 160, 60 * KiB);
  const slack = 12 * (64 + 64 + 4) * KiB;
  let most = 0;
  for (let i = 0; i < 12; i++) {
    const c = await f.client();
    c.socket.pause();
    c.send(
      p.encodeFetchStreamRequest(c.id(), {
        topic: "big",
        partition: 0,
        offset: 0,
        maxBytes: 256 * KiB,
        maxWaitMs: 30_000,
        minBytes: 1,
        windowBytes: 64 * MiB,
        group: "",
        memberId: "",
        generation: 0,
      }),
    );
  }
  // Each stream pushes until it sent the topic or the bound holds it; give them time to.
  for (let i = 0; i < 400; i++) {
    await new Promise((resolve) => setTimeout(resolve, i < 100 ? 0 : 5));
    most = Math.max(most, f.server.queuedResponseBytes);
  }
  assert.ok(most <= cap + slack, `queued ${most} bytes, bound ${cap} + ${slack}`);
  assert.ok(most >= cap / 2, `the test reaches the bound (${most} of ${cap})`);
  const reader = await f.client();
  const got = p.decodeFetchResponse(await reader.call(bigFetch));
  assert.ok(recordsOf(got.records).length >= 1);
});

test("the shared bound must hold the largest fetch answer", () => {
  const config = resolveBrokerConfig({});
  assert.throws(
    () => resolveLimits(config, { maxQueuedResponseBytes: 8 * MiB, maxFetchBytes: 16 * MiB }),
    /maxQueuedResponseBytes/,
  );
  assert.throws(() => resolveBrokerConfig({ maxQueuedResponseBytes: MiB }), /maxQueuedResponseBytes/);
  assert.equal(resolveLimits(config, {}).maxQueuedResponseBytes, 256 * MiB);
});

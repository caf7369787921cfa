/** The consumer's fetch streams against a real broker whose handlers count what they are asked. */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { Conch } from "../../src/client/conch.js";
import type { Consumer } from "../../src/client/consumer.js";
import { ApiKey } from "../../src/protocol/api.js";
import { decodeFetchStreamRequest } from "../../src/protocol/fetch-stream.js";
import { ConchServer } from "../../src/server/conch-server.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry } from "../../src/server/handler.js";

/** A broker whose requests are counted by apiKey; `without` apiKeys it does not know. */
async function countingBroker(t: TestContext, without: number[] = []) {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-stream-"));
  const broker = await Broker.open({ dataDir, segmentBytes: 8 << 20, flush: "none" });
  const counts = new Map<number, number>();
  const windows: number[] = [];
  const handlers = defaultHandlers().map((entry, apiKey): HandlerEntry | undefined => {
    if (entry === undefined || without.includes(apiKey)) return undefined;
    return {
      ...entry,
      handle: (ctx, frame, id) => {
        counts.set(apiKey, (counts.get(apiKey) ?? 0) + 1);
        if (apiKey === ApiKey.FETCH_STREAM) windows.push(decodeFetchStreamRequest(frame).windowBytes);
        return entry.handle(ctx, frame, id);
      },
    };
  });
  const server = new ConchServer(broker, { shutdownTimeoutMs: 1000, handlers });
  const { port } = await server.listen(0, "127.0.0.1");
  const conch = new Conch({ brokers: [`127.0.0.1:${port}`] });
  t.after(async () => {
    await conch.close();
    await server.close();
    await broker.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { conch, count: (apiKey: number) => counts.get(apiKey) ?? 0, windows };
}

/** Produces `n` messages "m<i>" in batches of 10. */
async function fill(conch: Conch, topic: string, n: number): Promise<void> {
  await conch.admin().createTopic(topic);
  const producer = conch.producer();
  for (let i = 0; i < n; i += 10) {
    const batch = Array.from({ length: 10 }, (_, k) => ({ value: `m${i + k}`.padEnd(100, ".") }));
    await producer.sendBatch(topic, batch);
  }
  await producer.close();
}

/** The values of the next `n` messages, trimmed of their padding. */
async function values(consumer: Consumer, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const m of consumer) {
    out.push(m.value.toString().replace(/\.+$/, ""));
    if (out.length === n) break;
  }
  return out;
}

const expected = (from: number, n: number) => Array.from({ length: n }, (_, i) => `m${from + i}`);

test("a consumer reads through many windows on one stream, crediting as it goes", {
  timeout: 30_000,
}, async (t) => {
  const { conch, count } = await countingBroker(t);
  await fill(conch, "many", 3000);
  // 4 KiB responses in an 8 KiB window: 300 KB of batches need dozens of credits.
  const consumer = conch.consumer({ topics: ["many"], maxBytes: 4096, maxPrefetchBytes: 8192 });
  assert.deepEqual(await values(consumer, 3000), expected(0, 3000));
  await consumer.close();
  assert.equal(count(ApiKey.FETCH_STREAM), 1);
  assert.equal(count(ApiKey.FETCH), 0);
  assert.ok(count(ApiKey.STREAM_CREDIT) >= 30, `${count(ApiKey.STREAM_CREDIT)} credits`);
});

test("a stream's window is its partition's share of the prefetch bytes, from 2 to 8 responses' worth", {
  timeout: 30_000,
}, async (t) => {
  const { conch, windows } = await countingBroker(t);
  await conch.admin().createTopic("shares", { partitions: 20 });
  const read = async (options: Parameters<Conch["consumer"]>[0], partitions: number) => {
    windows.length = 0;
    const consumer = conch.consumer({
      ...options,
      partitions: Array.from({ length: partitions }, (_, partition) => ({ topic: "shares", partition })),
    });
    await consumer.start();
    // Each partition's stream opens once it knows its position: wait for all of them.
    for (let i = 0; i < 200 && windows.length < partitions; i++) await new Promise((r) => setTimeout(r, 10));
    await consumer.close();
    return [...new Set(windows)];
  };
  const MiB = 1 << 20;
  // One partition: 32 MiB by default, but at most 8 responses.
  assert.deepEqual(await read({}, 1), [8 * MiB]);
  // Four share 32 MiB: 8 MiB each, still 8 responses.
  assert.deepEqual(await read({}, 4), [8 * MiB]);
  // Twenty: 1.6 MiB each, raised to two responses' worth.
  assert.deepEqual(await read({}, 20), [2 * MiB]);
  // Ten of 12 MiB, with responses of 256 KiB: 1.2 MiB each, between 512 KiB and 2 MiB.
  assert.deepEqual(await read({ maxPrefetchBytes: 12 * MiB, maxBytes: 256 * 1024 }, 10), [
    Math.floor((12 * MiB) / 10),
  ]);
});

test("seek cancels the stream and opens another at the new position", { timeout: 30_000 }, async (t) => {
  const { conch, count } = await countingBroker(t);
  await fill(conch, "seek", 200);
  const consumer = conch.consumer({ partitions: [{ topic: "seek", partition: 0, from: "earliest" }] });
  assert.deepEqual(await values(consumer, 20), expected(0, 20));
  consumer.seek("seek", 0, { offset: 150 });
  assert.deepEqual(await values(consumer, 50), expected(150, 50));
  await consumer.close();
  assert.equal(count(ApiKey.FETCH_STREAM), 2);
  assert.ok(count(ApiKey.STREAM_CANCEL) >= 1);
});

test("against a broker without streams the consumer fetches instead", { timeout: 30_000 }, async (t) => {
  const { conch, count } = await countingBroker(t, [
    ApiKey.FETCH_STREAM,
    ApiKey.STREAM_CREDIT,
    ApiKey.STREAM_CANCEL,
  ]);
  await fill(conch, "old", 500);
  const consumer = conch.consumer({ topics: ["old"], maxBytes: 4096 });
  assert.deepEqual(await values(consumer, 500), expected(0, 500));
  await consumer.close();
  assert.ok(count(ApiKey.FETCH) >= 10, `${count(ApiKey.FETCH)} fetches`);
});

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
import { ConchServer } from "../../src/server/conch-server.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry } from "../../src/server/handler.js";

/** A broker whose requests are counted by apiKey; `without` apiKeys it does not know. */
async function countingBroker(t: TestContext, without: number[] = []) {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-stream-"));
  const broker = await Broker.open({ dataDir, segmentBytes: 8 << 20, flush: "none" });
  const counts = new Map<number, number>();
  const handlers = defaultHandlers().map((entry, apiKey): HandlerEntry | undefined => {
    if (entry === undefined || without.includes(apiKey)) return undefined;
    return {
      ...entry,
      handle: (ctx, frame, id) => {
        counts.set(apiKey, (counts.get(apiKey) ?? 0) + 1);
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
  return { conch, count: (apiKey: number) => counts.get(apiKey) ?? 0 };
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
  const consumer = conch.consumer({ topics: ["many"], maxBytes: 4096 });
  assert.deepEqual(await values(consumer, 3000), expected(0, 3000));
  await consumer.close();
  assert.equal(count(ApiKey.FETCH_STREAM), 1);
  assert.equal(count(ApiKey.FETCH), 0);
  assert.ok(count(ApiKey.STREAM_CREDIT) >= 30, `${count(ApiKey.STREAM_CREDIT)} credits`);
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

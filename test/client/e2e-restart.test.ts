import assert from "node:assert/strict";
import { test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { ConsumerBatch } from "../../src/client/consumer.js";
import { RealBroker } from "./real-broker.js";

const TOTAL = 30_000;

test("a broker restarted mid-stream: clients reconnect and go on; nothing acknowledged durably is lost", {
  timeout: 60_000,
}, async (t) => {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address], reconnectBackoffMs: 10, reconnectBackoffMaxMs: 100 });
  t.after(() => conch.close());
  await conch.admin().createTopic("restart", { partitions: 2 });

  const acked = new Uint8Array(TOTAL);
  let ackedCount = 0;
  let failed = 0;
  const producer = conch.producer({ acks: "durable", retryBackoffMs: 10 });
  const producing = (async () => {
    const window: Array<Promise<void>> = [];
    for (let i = 0; i < TOTAL; i++) {
      window.push(
        producer.send("restart", { key: String(i % 7), value: String(i) }).then(
          () => {
            acked[i] = 1;
            ackedCount++;
          },
          () => {
            failed++;
          },
        ),
      );
      if (window.length === 500) await Promise.all(window.splice(0));
    }
    await Promise.all(window);
    await producer.close();
  })();

  // A consumer that follows the stream through the restarts.
  const consumer = conch.consumer({ topics: ["restart"], maxWaitMs: 100 });
  const received = new Uint8Array(TOTAL);
  const nextOffset = [0, 0];
  let gaps = 0;
  let batches = 0;
  const consuming = (async () => {
    for await (const b of consumer.batches() as AsyncIterable<ConsumerBatch>) {
      batches++;
      const c = b.cursor();
      while (c.next()) {
        // Resuming exactly at its position: offsets follow on without a gap or a repeat.
        if (c.offset !== nextOffset[b.partition]) gaps++;
        nextOffset[b.partition] = c.offset + 1;
        received[Number(c.value().toString())] = 1;
      }
    }
  })();

  for (let round = 1; round <= 2; round++) {
    const target = (TOTAL * round) / 3;
    while (ackedCount < target) await new Promise((resolve) => setTimeout(resolve, 5));
    await rb.stop();
    await rb.restart();
  }
  await producing;
  assert.equal(failed, 0, "every send got through, retried across the restarts");
  assert.equal(ackedCount, TOTAL);

  const ends = await Promise.all([0, 1].map((p) => conch.admin().listOffsets("restart", p, "latest")));
  while (nextOffset[0]! < ends[0]!.offset || nextOffset[1]! < ends[1]!.offset) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await consumer.close();
  await consuming;
  assert.equal(gaps, 0, "the consumer resumed at its position after each restart");
  assert.ok(batches > 2);
  for (let i = 0; i < TOTAL; i++)
    if (acked[i] === 1 && received[i] !== 1) assert.fail(`acknowledged message ${i} lost`);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { ProducerMessage, SendBatchResult } from "../../src/client/producer.js";
import { RealBroker } from "./real-broker.js";

const N = 1_000_000;
const PARTITIONS = 4;
const CHUNK = 25_000;
const WINDOW = 4;

/** The decimal number in buf[start, end). */
function parseDecimal(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) n = n * 10 + (buf[i]! - 48);
  return n;
}

test("a million small messages through the SDK: each received exactly once, in order per partition", {
  timeout: 90_000,
}, async (t) => {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  await conch.admin().createTopic("million", { partitions: PARTITIONS });

  // Produce: keyless messages (round-robin per batch), in windows of sendBatch calls.
  const producer = conch.producer();
  const partitionOf = new Uint8Array(N);
  const offsetOf = new Float64Array(N);
  const record = (start: number) => (r: SendBatchResult) => {
    partitionOf.set(r.partitions, start);
    offsetOf.set(r.offsets, start);
  };
  const inFlight: Array<Promise<void>> = [];
  for (let start = 0; start < N; start += CHUNK) {
    const messages: ProducerMessage[] = new Array(CHUNK);
    for (let i = 0; i < CHUNK; i++) messages[i] = { value: String(start + i) };
    inFlight.push(producer.sendBatch("million", messages).then(record(start)));
    if (inFlight.length >= WINDOW) await inFlight.shift();
  }
  await Promise.all(inFlight);
  await producer.close();

  const perPartition = new Array<number>(PARTITIONS).fill(0);
  for (let i = 0; i < N; i++) perPartition[partitionOf[i]!]!++;
  assert.ok(
    perPartition.every((n) => n > 0),
    `every partition got messages: ${perPartition}`,
  );

  // Consume with the batch API: no object per message.
  const consumer = conch.consumer({ topics: ["million"] });
  const seen = new Uint8Array(N);
  const lastSeq = new Array<number>(PARTITIONS).fill(-1);
  const nextOffset = new Array<number>(PARTITIONS).fill(0);
  let received = 0;
  for await (const batch of consumer.batches()) {
    const p = batch.partition;
    const c = batch.cursor();
    const buf = c.buffer;
    while (c.next()) {
      const seq = parseDecimal(buf, c.valueStart, c.valueEnd);
      assert.ok(seq < N, `value ${seq}`);
      if (seen[seq] !== 0) assert.fail(`message ${seq} received twice`);
      seen[seq] = 1;
      if (c.offset !== nextOffset[p])
        assert.fail(`partition ${p}: offset ${c.offset}, expected ${nextOffset[p]}`);
      if (seq <= lastSeq[p]!) assert.fail(`partition ${p}: ${seq} after ${lastSeq[p]}`);
      if (partitionOf[seq] !== p || offsetOf[seq] !== c.offset) {
        assert.fail(
          `message ${seq} at ${p}/${c.offset}, acknowledged at ${partitionOf[seq]}/${offsetOf[seq]}`,
        );
      }
      nextOffset[p] = c.offset + 1;
      lastSeq[p] = seq;
      received++;
    }
    if (received === N) break;
  }
  assert.equal(received, N);
  assert.deepEqual(nextOffset, perPartition, "each partition holds exactly its messages, offsets from 0");
  assert.deepEqual(
    consumer
      .positions()
      .sort((a, b) => a.partition - b.partition)
      .map((p) => p.offset),
    perPartition,
  );
  await consumer.close();
});

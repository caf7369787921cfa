/**
 * `conch bench consume`: reads --messages from the start of the topic with consumer.batches(),
 * walking every record with a cursor (no object per record). If the topic holds fewer messages, it
 * is filled first, outside the timed part. No latency is reported: with prefetching, the time the
 * reader waits for a batch is not the latency of any message (`bench latency` measures that).
 */
import { requireFigures } from "../client/admin.js";
import type { Conch } from "../client/conch.js";
import { BatchCursor } from "../client/consumer-batch.js";
import type { BenchOptions } from "./bench-commands.js";
import { sendAll } from "./bench-produce.js";
import type { GcMeter } from "./bench-report.js";
import type { BenchResult } from "./bench-runner.js";
import { printStatus } from "./output.js";
import { Progress } from "./progress.js";

export async function benchConsume(client: Conch, o: BenchOptions, gc: GcMeter): Promise<BenchResult> {
  const stored = await storedMessages(client, o.topic);
  if (stored < o.messages) {
    const missing = o.messages - stored;
    printStatus(`filling ${o.topic} with ${missing} messages of ${o.size} bytes first (not timed)`);
    const producer = client.producer({ acks: o.acks, lingerMs: o.lingerMs });
    await sendAll(producer, { ...o, messages: missing }, null, null);
    await producer.close();
  }

  const consumer = client.consumer({ topics: [o.topic], from: "earliest", maxBytes: 4 << 20 });
  const cursor = new BatchCursor();
  const progress = new Progress("consume", o.messages);
  let count = 0;
  let bytes = 0;
  gc.start();
  const started = performance.now();
  for await (const batch of consumer.batches()) {
    batch.cursor(cursor);
    while (count < o.messages && cursor.next()) {
      bytes += cursor.valueEnd - cursor.valueStart;
      count++;
    }
    progress.update(count);
    if (count >= o.messages) break;
  }
  const seconds = (performance.now() - started) / 1000;
  progress.stop();
  await consumer.close();
  return { messages: count, bytes, seconds, latency: null };
}

/** Messages retained in the topic now, over all partitions. */
async function storedMessages(client: Conch, topic: string): Promise<number> {
  const d = await client.admin().describeTopic(topic);
  requireFigures(d);
  let total = 0;
  for (const p of d.partitions) total += p.highWatermark - p.logStartOffset;
  return total;
}

/**
 * `conch bench latency`: a producer sends at --rate messages/s while a consumer in the same process
 * reads them; each message's latency runs from the moment it was due to be sent (its slot in the
 * schedule, written into the first 8 bytes of its value) to the moment the consumer sees it. Timing
 * from the scheduled rather than the actual send keeps a stalled sender from hiding its own delay
 * (coordinated omission). Messages due at the same wake-up go out in one sendBatch call.
 */
import { requireFigures } from "../client/admin.js";
import type { Conch } from "../client/conch.js";
import { BatchCursor } from "../client/consumer-batch.js";
import type { Producer, ProducerMessage } from "../client/producer.js";
import type { BenchOptions } from "./bench-commands.js";
import { type GcMeter, LatencyRecorder } from "./bench-report.js";
import type { BenchResult } from "./bench-runner.js";
import { printStatus } from "./output.js";
import { Progress } from "./progress.js";

/** How long the reader waits for stragglers once everything is sent. */
const STALL_MS = 10_000;

export async function benchLatency(client: Conch, o: BenchOptions, gc: GcMeter): Promise<BenchResult> {
  // Start from the current end of every partition, looked up before anything is sent.
  const d = await client.admin().describeTopic(o.topic);
  requireFigures(d);
  const partitions = d.partitions.map((p) => ({
    topic: o.topic,
    partition: p.partition,
    from: { offset: p.highWatermark },
  }));
  const consumer = client.consumer({ partitions, maxWaitMs: 100 });
  const producer = client.producer({ acks: o.acks, lingerMs: o.lingerMs });
  const latency = new LatencyRecorder();
  const progress = new Progress("latency", o.messages);
  await consumer.start();

  gc.start();
  const started = performance.now();
  const sending = sendPaced(producer, o, started);
  // A failed send would leave the reader waiting for messages that never come; so would a message
  // lost with acks=none. The reader gives up once everything is sent and nothing came for a while.
  sending.catch(() => consumer.close());
  // (Set in a callback; the cast keeps the checker from narrowing it to null.)
  let stall = null as NodeJS.Timeout | null;
  void sending.then(() => {
    stall = setTimeout(() => void consumer.close(), STALL_MS);
  });
  let received = 0;
  const cursor = new BatchCursor();
  for await (const batch of consumer.batches()) {
    batch.cursor(cursor);
    const now = performance.now();
    while (cursor.next()) {
      latency.recordMs(now - cursor.buffer.readDoubleBE(cursor.valueStart));
      received++;
    }
    progress.update(received);
    stall?.refresh();
    if (received >= o.messages) break;
  }
  const seconds = (performance.now() - started) / 1000;
  if (stall !== null) clearTimeout(stall);
  progress.stop();
  if (received < o.messages) {
    printStatus(
      `only ${received} of ${o.messages} messages arrived (none for ${STALL_MS / 1000} s after the last send)`,
    );
  }
  await sending;
  await Promise.all([consumer.close(), producer.close()]);
  return { messages: received, bytes: received * o.size, seconds, latency };
}

/** Sends message k at `started + k / rate`, stamping that time into its value. */
async function sendPaced(producer: Producer, o: BenchOptions, started: number): Promise<void> {
  const intervalMs = 1000 / o.rate;
  let sent = 0;
  let pending: Promise<unknown>[] = [];
  while (sent < o.messages) {
    const due = Math.min(o.messages, Math.floor((performance.now() - started) / intervalMs) + 1);
    if (due > sent) {
      const messages: ProducerMessage[] = [];
      for (; sent < due && messages.length < o.batch; sent++) {
        const value = Buffer.allocUnsafe(o.size).fill(0x61, 8);
        value.writeDoubleBE(started + sent * intervalMs, 0);
        messages.push({ value });
      }
      pending.push(producer.sendBatch(o.topic, messages));
      if (pending.length >= 256) {
        await Promise.all(pending);
        pending = [];
      }
      if (!producer.hasRoom) await producer.waitForRoom();
    }
    // Behind schedule: let the sends and the consumer run, then catch up. On time: sleep until the
    // next message is due (timers have ~1 ms resolution).
    const wait = sent < due ? 0 : Math.max(0, started + sent * intervalMs - performance.now());
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await Promise.all(pending);
}

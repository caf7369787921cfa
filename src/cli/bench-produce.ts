/**
 * `conch bench produce`: sendBatch calls of --batch messages, each value the same --size bytes,
 * with --in-flight calls in flight (fewer when the producer's buffer is full). Latency is per
 * sendBatch call, from the call to its acknowledgement.
 */
import type { Conch } from "../client/conch.js";
import type { Producer, ProducerMessage } from "../client/producer.js";
import type { BenchOptions } from "./bench-commands.js";
import { type GcMeter, LatencyRecorder } from "./bench-report.js";
import type { BenchResult } from "./bench-runner.js";
import { Progress } from "./progress.js";

export async function benchProduce(client: Conch, o: BenchOptions, gc: GcMeter): Promise<BenchResult> {
  const producer = client.producer({
    acks: o.acks,
    lingerMs: o.lingerMs,
    compression: o.compression ?? "none",
  });
  const latency = new LatencyRecorder();
  const progress = new Progress("produce", o.messages);
  gc.start();
  const started = performance.now();
  await sendAll(producer, o, progress, latency);
  const seconds = (performance.now() - started) / 1000;
  progress.stop();
  await producer.close();
  return { messages: o.messages, bytes: o.messages * o.size, seconds, latency };
}

/**
 * Sends `o.messages` messages of `o.size` bytes to `o.topic`; resolves once all are acknowledged.
 * Also used by `bench consume` to fill a topic.
 */
export async function sendAll(
  producer: Producer,
  o: Pick<BenchOptions, "topic" | "messages" | "size" | "batch" | "inFlight">,
  progress: Progress | null,
  latency: LatencyRecorder | null,
): Promise<void> {
  // The producer copies each value into its batch, so one payload serves every message.
  const payload = Buffer.alloc(o.size, 0x61);
  const full: ProducerMessage[] = Array.from({ length: Math.min(o.batch, o.messages) }, () => ({
    value: payload,
  }));
  let sent = 0;
  let acked = 0;
  let failure: unknown = null;
  let inFlight = 0;
  let allDone: (() => void) | null = null;
  let slotFree: (() => void) | null = null;
  const settled = (): void => {
    if (--inFlight === 0) allDone?.();
    const wake = slotFree;
    slotFree = null;
    wake?.();
  };
  while (sent < o.messages && failure === null) {
    const n = Math.min(o.batch, o.messages - sent);
    const messages = n === full.length ? full : full.slice(0, n);
    const t0 = performance.now();
    inFlight++;
    producer.sendBatch(o.topic, messages).then(
      () => {
        latency?.recordSince(t0);
        acked += n;
        progress?.update(acked);
        settled();
      },
      (err: unknown) => {
        failure ??= err;
        settled();
      },
    );
    sent += n;
    if (inFlight >= o.inFlight) await new Promise<void>((resolve) => (slotFree = resolve));
    if (!producer.hasRoom) await producer.waitForRoom();
  }
  if (inFlight > 0) await new Promise<void>((resolve) => (allDone = resolve));
  if (failure !== null) throw failure;
}

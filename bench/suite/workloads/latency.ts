import { performance } from "node:perf_hooks";
import * as hdr from "hdr-histogram-js";
import { startClock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { LatencySummary } from "../types.js";
import { scaled, totalMessages, type Workload } from "./workload.js";

/**
 * The producer sends what is due every PACE_MS. Node's timers have a resolution of 1 ms (a 1 ms
 * `setTimeout` chain fires every 1.1-1.4 ms, so a message waited up to 2 ms for its send), so
 * between sends the loop naps in `Atomics.wait` for NAP_MS at a time and goes round the event loop
 * (serving the consumer's reads) instead of waiting for a timer. Napping rather than spinning
 * leaves the broker its core on a two-core machine.
 */
export const PACE_MS = 0.25;
export const NAP_MS = 0.05;
/** Unacknowledged send calls allowed before the producer stops to wait (about a second of sends). */
const MAX_PENDING_CALLS = 4_000;
const DRAIN_MS = 30_000;

/**
 * 3. Produce-to-consume latency at a fixed rate. The producer sends every 0.25 ms whatever the
 * schedule says is due; each payload carries the time its message was *scheduled* for (not the
 * time it left), so a producer that falls behind shows up as latency instead of hiding it
 * (no coordinated omission). Producer and consumer share one process and one clock. Each payload
 * also carries the time of the send call that carried it, so the report can split the latency
 * into the wait for the send and the rest (send call to receipt).
 */
export const latency: Workload = {
  id: "latency",
  title: "3. latency",
  method:
    "1 producer at a fixed 50,000 msg/s (sending what is due every 0.25 ms) and 1 consumer tailing the stream, 100-byte payloads, 11 s of which the first second is warm-up; latency from scheduled send to receipt",
  durability: "interval",
  params: (scale) => ({
    stream: "bench_latency",
    producers: 1,
    messagesPerProducer: scaled(550_000, scale, 5_000),
    payloadBytes: 100,
    batch: 0,
    inFlight: MAX_PENDING_CALLS,
    rate: 50_000,
    warmupMessages: scaled(50_000, scale, 500),
  }),
  async run(driver, p) {
    const total = totalMessages(p);
    await driver.createStream(p.stream);
    const consumer = await driver.openConsumer(p.stream);
    const producer = await driver.openProducer(p.stream, "interval");
    const histogram = newHistogram();
    const transfer = newHistogram();
    const stamp = new Float64Array(2);
    const stampBytes = new Uint8Array(stamp.buffer);
    let received = 0;
    let outOfOrder = 0;
    let lastStamp = 0;
    let primed: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      primed = resolve;
    });
    const aborter = new AbortController();
    const consuming = consumer.run((bytes, start) => {
      for (let i = 0; i < 16; i++) stampBytes[i] = bytes[start + i]!;
      const scheduled = stamp[0]!;
      // The priming message (stamped 0) tells that both ends are connected and flowing.
      if (scheduled === 0) {
        primed();
        return true;
      }
      if (scheduled < lastStamp) outOfOrder++;
      lastStamp = scheduled;
      if (received >= p.warmupMessages) {
        const now = performance.now();
        histogram.recordValue(Math.max(1, Math.round((now - scheduled) * 1000)));
        transfer.recordValue(Math.max(1, Math.round((now - stamp[1]!) * 1000)));
      }
      received++;
      return received < total;
    }, aborter.signal);
    const priming = Buffer.alloc(p.payloadBytes);
    await producer.sendBatch([priming]);
    await withDeadline("latency priming", DRAIN_MS, Promise.race([ready, consuming]));

    const template = Buffer.alloc(p.payloadBytes, 0x61);
    const stop = startClock();
    const start = performance.now() + 10;
    const intervalMs = 1000 / p.rate;
    let sent = 0;
    let pendingCalls = 0;
    let failure: unknown;
    const onAck = () => {
      pendingCalls--;
    };
    const onError = (err: unknown) => {
      pendingCalls--;
      failure ??= err;
    };
    const nap = new Int32Array(new SharedArrayBuffer(4));
    let lastCall = Number.NEGATIVE_INFINITY;
    await new Promise<void>((resolve) => {
      const tick = () => {
        if (failure !== undefined) return resolve();
        const now = performance.now();
        if (now - lastCall >= PACE_MS && pendingCalls < MAX_PENDING_CALLS) {
          const due = Math.min(total, Math.floor((now - start) / intervalMs) + 1);
          if (due > sent) {
            lastCall = now;
            const batch = new Array<Buffer>(due - sent);
            for (let i = 0; i < batch.length; i++) {
              const payload = Buffer.allocUnsafe(p.payloadBytes);
              template.copy(payload);
              payload.writeDoubleLE(start + (sent + i) * intervalMs, 0);
              payload.writeDoubleLE(now, 8);
              batch[i] = payload;
            }
            sent = due;
            pendingCalls++;
            producer.sendBatch(batch).then(onAck, onError);
          }
        }
        if (sent >= total) return resolve();
        Atomics.wait(nap, 0, 0, NAP_MS);
        setImmediate(tick);
      };
      setTimeout(tick, Math.max(0, start - performance.now()));
    });
    try {
      if (failure !== undefined) throw failure;
      await withDeadline("latency drain", DRAIN_MS, consuming);
    } finally {
      aborter.abort();
      await Promise.allSettled([producer.close(), consumer.close()]);
    }
    const span = stop();
    if (received !== total || outOfOrder > 0) {
      throw new Error(`received ${received} of ${total} messages, ${outOfOrder} out of order`);
    }
    const latencyUs = summarize(histogram);
    const transferUs = summarize(transfer);
    return {
      messages: total,
      payloadBytes: total * p.payloadBytes,
      seconds: span.seconds,
      clientCpuSeconds: span.cpuSeconds,
      latencyUs,
      transferUs,
    };
  },
};

function newHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

/** Percentiles in microseconds; frees the histogram. */
function summarize(h: hdr.Histogram): LatencySummary {
  const out = {
    count: h.totalCount,
    p50: h.getValueAtPercentile(50),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    max: h.maxValue,
  };
  h.destroy();
  return out;
}

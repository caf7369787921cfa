/**
 * Quotas on the Kafka listener (docs/kafka.md "Quotas"): a produce or fetch over its byte rate is
 * answered with throttle_time_ms and the connection muted that long; a client of a version before
 * KIP-219 has its response held instead; a fast librdkafka producer (kcat) is visibly slowed to its
 * quota and every message arrives.
 */
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { type TestContext, test } from "node:test";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { hasTool, kafkaRequest, type RawKafkaClient, responseBody, runTool } from "./kafka-harness.js";
import { startSecureKafka } from "./kafka-secure-harness.js";

/** One batch of `count` records of `size` bytes. */
function records(count: number, size: number): Buffer {
  const b = new RecordBatchBuilder();
  for (let i = 0; i < count; i++) b.add(1_700_000_000_000, null, Buffer.alloc(size, 0x61));
  return b.finish({ baseOffset: 0 });
}

/** A Produce request at `version` (0-2 lack the transactional id) of `batch` to partition 0 of `topic`. */
function produce(version: number, correlationId: number, topic: string, batch: Buffer): Buffer {
  return kafkaRequest(0, version, correlationId, (w) => {
    if (version >= 3) w.nullableString(null);
    w.int16(1);
    w.int32(5000);
    w.arrayCount(1);
    w.string(topic);
    w.arrayCount(1);
    w.int32(0);
    w.nullableBytes(batch);
  });
}

/** A Produce response's throttle_time_ms (its last field) and the partition's error code. */
function produceThrottle(frame: Buffer): { throttleMs: number; error: number } {
  const { body } = responseBody(frame);
  body.arrayCount(1);
  body.string();
  body.arrayCount(1);
  body.int32();
  return { error: body.int16(), throttleMs: frame.readInt32BE(frame.length - 4) };
}

/** A raw client of a broker whose client ids may produce 20 kB/s, and topic "q". */
async function clientOverQuota(t: TestContext): Promise<RawKafkaClient> {
  const f = await startSecureKafka(t);
  await f.broker.createTopic("q", 1);
  await f.security.setQuota("clientIds", null, { produceBytesPerSec: 20_000 });
  return f.raw();
}

/** Sends a frame; resolves with the response and the ms it took. */
async function timed(c: RawKafkaClient, frame: Buffer): Promise<{ frame: Buffer; ms: number }> {
  const start = performance.now();
  c.send(frame);
  const res = await c.next();
  return { frame: res, ms: performance.now() - start };
}

test("kafka quotas: a produce over its quota is answered with throttle_time_ms and the connection muted that long", async (t) => {
  const f = await startSecureKafka(t);
  await f.broker.createTopic("q", 1);
  // 20 kB/s, a burst of one second: a 40 kB produce is 20 kB in debt, one second's throttle.
  await f.security.setQuota("principals", null, { produceBytesPerSec: 20_000 });
  const c = await f.raw();
  const batch = records(40, 1000);
  const first = await timed(c, produce(7, 1, "q", batch));
  const answer = produceThrottle(first.frame);
  assert.equal(answer.error, 0);
  assert.ok(answer.throttleMs >= 900 && answer.throttleMs <= 1500, `throttle ${answer.throttleMs} ms`);
  assert.ok(first.ms < answer.throttleMs / 2, "a v7 client waits itself: the answer comes at once");
  // The next request is not read until the throttle has passed.
  const second = await timed(c, produce(7, 2, "q", batch));
  assert.ok(second.ms >= answer.throttleMs * 0.8, `the next answer took ${second.ms} ms`);
  assert.equal(f.broker.partition("q", 0).highWatermark, 80, "nothing refused or lost");
});

test("kafka quotas: before KIP-219 (Produce v5) the response itself is held for the throttle", async (t) => {
  const c = await clientOverQuota(t);
  const r = await timed(c, produce(5, 1, "q", records(40, 1000)));
  const answer = produceThrottle(r.frame);
  assert.ok(answer.throttleMs >= 900, `throttle ${answer.throttleMs} ms`);
  assert.ok(r.ms >= answer.throttleMs * 0.8, `held ${r.ms} ms`);
});

test("kafka quotas: a Produce v0 over its quota (refused, and without throttle_time_ms) is answered intact", async (t) => {
  const c = await clientOverQuota(t);
  const r = await timed(c, produce(0, 1, "q", records(40, 1000)));
  const { body } = responseBody(r.frame);
  assert.equal(body.arrayCount(1), 1);
  assert.equal(body.string(), "q");
  assert.equal(body.arrayCount(1), 1);
  assert.equal(body.int32(), 0);
  assert.equal(body.int16(), 35, "UNSUPPORTED_VERSION");
  assert.equal(body.int64(), -1, "the base offset, not overwritten by a throttle time");
  body.done();
  assert.ok(r.ms >= 800, `held ${r.ms} ms: the throttle still applies`);
});

test("kafka quotas: a fetch over its quota carries throttle_time_ms", async (t) => {
  const f = await startSecureKafka(t);
  await f.broker.createTopic("q", 1);
  const c = await f.raw();
  produceThrottle((await timed(c, produce(7, 1, "q", records(40, 1000)))).frame);
  await f.security.setQuota("principals", null, { fetchBytesPerSec: 10_000 });
  const fetch = kafkaRequest(1, 11, 2, (w) => {
    w.int32(-1);
    w.int32(0);
    w.int32(0);
    w.int32(1 << 20);
    w.int8(0);
    w.int32(0);
    w.int32(-1);
    w.arrayCount(1);
    w.string("q");
    w.arrayCount(1);
    w.int32(0);
    w.int32(-1);
    w.int64(0);
    w.int64(-1);
    w.int32(1 << 20);
    w.arrayCount(0);
    w.string("");
  });
  const r = await timed(c, fetch);
  const throttleMs = responseBody(r.frame).body.int32();
  assert.ok(r.frame.length > 40_000, "the records came");
  assert.ok(throttleMs >= 2000, `throttle ${throttleMs} ms`);
});

test("kafka quotas: a fast librdkafka producer is slowed to its quota and every message arrives", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
  const f = await startSecureKafka(t);
  await f.broker.createTopic("fast", 1);
  const count = 2000;
  const input = `${"x".repeat(99)}\n`.repeat(count);
  const args = ["-b", f.bootstrap, "-P", "-t", "fast", "-p", "0", "-X", "batch.num.messages=100"];
  const run = async (): Promise<number> => {
    const start = performance.now();
    const r = await runTool("kcat", args, input, 60_000);
    assert.equal(r.code, 0, r.stderr);
    return performance.now() - start;
  };
  const free = await run();
  // 50 kB/s, a burst of one second, about 240 kB sent: some four seconds' throttle.
  await f.security.setQuota("principals", null, { produceBytesPerSec: 50_000 });
  const throttled = await run();
  assert.ok(
    throttled >= 2500,
    `throttled run took ${Math.round(throttled)} ms (free: ${Math.round(free)} ms)`,
  );
  assert.ok(throttled > free + 2000, `throttled ${Math.round(throttled)} ms, free ${Math.round(free)} ms`);
  assert.equal(f.broker.partition("fast", 0).highWatermark, 2 * count, "every message arrived");
});

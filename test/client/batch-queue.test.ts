import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { BatchQueue } from "../../src/client/batch-queue.js";
import { type BatchSource, ConsumerBatch } from "../../src/client/consumer-batch.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

/** A partition source that records which batches were taken. */
function source(): BatchSource & { taken: (b: ConsumerBatch) => void; takenCount: number } {
  return {
    topic: "t",
    partition: 0,
    epoch: 0,
    position: 0,
    paused: false,
    takenCount: 0,
    taken() {
      this.takenCount++;
    },
  };
}

test("a stale batch that is the last one queued is skipped, and take() returns null", () => {
  const queue = new BatchQueue();
  const s = source();
  // biome-ignore lint/suspicious/noExplicitAny: the queue only calls taken() on its source
  queue.deliver(new ConsumerBatch(s as any, Buffer.alloc(0), 0, 1, 1));
  (s as { epoch: number }).epoch = 1; // a seek makes the queued batch stale
  assert.equal(queue.take(), null);
  assert.equal(s.takenCount, 0);
});

test("stale batches before a fresh one are skipped; the fresh one is returned", () => {
  const queue = new BatchQueue();
  const old = source();
  const fresh = source();
  // biome-ignore lint/suspicious/noExplicitAny: the queue only calls taken() on its source
  queue.deliver(new ConsumerBatch(old as any, Buffer.alloc(0), 0, 1, 1));
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const wanted = new ConsumerBatch(fresh as any, Buffer.alloc(0), 5, 6, 6);
  queue.deliver(wanted);
  (old as { epoch: number }).epoch = 1;
  assert.equal(queue.take(), wanted);
  assert.equal(fresh.takenCount, 1);
  assert.equal(queue.take(), null);
});

test("waits with different signals: aborting one fails only its wait; one listener per signal, kept between waits", async () => {
  const queue = new BatchQueue();
  const a = new AbortController();
  const b = new AbortController();
  const fromA = queue.wait(a.signal);
  const fromB = queue.wait(b.signal);
  a.abort();
  await assert.rejects(fromA, /abort/i);
  const s = source();
  // biome-ignore lint/suspicious/noExplicitAny: the queue only calls taken() on its source
  const batch = new ConsumerBatch(s as any, Buffer.alloc(0), 0, 1, 1);
  queue.deliver(batch);
  assert.equal(await fromB, batch);
  // The same signal again and again: its one listener stays, none piles up.
  for (let i = 0; i < 100; i++) {
    const next = queue.wait(b.signal);
    // biome-ignore lint/suspicious/noExplicitAny: as above
    queue.deliver(new ConsumerBatch(s as any, Buffer.alloc(0), i + 1, i + 2, i + 2));
    await next;
  }
  assert.equal(getEventListeners(b.signal, "abort").length, 1);
  // The queue's end lets go of it.
  queue.end();
  assert.equal(getEventListeners(b.signal, "abort").length, 0);
});

test("a paused partition's queued batches are held back, and come first, in order, when it resumes", () => {
  const queue = new BatchQueue();
  const paused = source();
  const other = source();
  const batch = (s: BatchSource, from: number) => new ConsumerBatch(s, Buffer.alloc(0), from, from + 1, 9);
  const [a1, a2, b1, b2] = [batch(paused, 1), batch(paused, 2), batch(other, 1), batch(other, 2)];
  queue.deliver(a1);
  queue.deliver(b1);
  queue.deliver(a2);
  (paused as { paused: boolean }).paused = true;
  assert.equal(queue.take(), b1);
  assert.equal(queue.take(), null, "a1 and a2 wait");
  queue.deliver(b2);
  (paused as { paused: boolean }).paused = false;
  queue.resumed(paused);
  assert.deepEqual([queue.take(), queue.take(), queue.take(), queue.take()], [a1, a2, b2, null]);
});

test("a partition's fatal error comes after the batches it delivered before it", () => {
  const queue = new BatchQueue();
  const s = source();
  // biome-ignore lint/suspicious/noExplicitAny: the queue only calls taken() on its source
  const good = new ConsumerBatch(s as any, Buffer.alloc(0), 0, 1, 1);
  queue.deliver(good);
  // biome-ignore lint/suspicious/noExplicitAny: as above
  queue.fail(s as any, new ConchError(ErrorCode.CORRUPT_BATCH, "damaged"));
  assert.equal(queue.take(), good);
  assert.throws(() => queue.take(), /damaged/);
  assert.equal(queue.take(), null);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchQueue } from "../../src/client/batch-queue.js";
import { type BatchSource, ConsumerBatch } from "../../src/client/consumer-batch.js";

/** A partition source that records which batches were taken. */
function source(): BatchSource & { taken: (b: ConsumerBatch) => void; takenCount: number } {
  return {
    topic: "t",
    partition: 0,
    epoch: 0,
    position: 0,
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

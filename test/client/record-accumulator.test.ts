import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProducerBatch, RecordMetadata } from "../../src/client/producer-batch.js";
import { type AccumulatorOptions, RecordAccumulator } from "../../src/client/record-accumulator.js";
import type { ConchError } from "../../src/format/errors.js";
import { HEADER_SIZE } from "../../src/format/layout.js";
import { RecordCursor } from "../../src/format/record-cursor.js";

const defaults: AccumulatorOptions = { batchBytes: 1024, lingerMs: 0, bufferBytes: 1 << 20, maxInFlight: 5 };

function setup(options: Partial<AccumulatorOptions> = {}) {
  const sent: ProducerBatch[] = [];
  const acc = new RecordAccumulator({ ...defaults, ...options }, (b) => sent.push(b));
  const results: Array<RecordMetadata | ConchError> = [];
  const add = (value: string, partition = 0, topic = "t") =>
    acc.append(
      topic,
      partition,
      value,
      null,
      1000,
      HEADER_SIZE + Buffer.byteLength(value),
      (m) => results.push(m),
      (e) => results.push(e),
    );
  return { acc, sent, results, add };
}

function values(batch: ProducerBatch): string[] {
  const out: string[] = [];
  const c = new RecordCursor(batch.records);
  while (c.next()) out.push(c.value().toString());
  return out;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

test("records sent in one tick share a batch, sent after a microtask when lingerMs is 0", async () => {
  const { sent, add } = setup();
  add("a");
  add("b");
  add("c");
  assert.equal(sent.length, 0, "nothing leaves synchronously");
  await Promise.resolve();
  assert.equal(sent.length, 1);
  assert.deepEqual(values(sent[0]!), ["a", "b", "c"]);
  add("d");
  await tick();
  assert.equal(sent.length, 2);
  assert.deepEqual(values(sent[1]!), ["d"]);
});

test("a batch is sealed when the next record would pass batchBytes", () => {
  const { sent, add } = setup({ batchBytes: 400, lingerMs: 60_000 });
  const value = "x".repeat(100 - HEADER_SIZE); // 100 bytes per record
  for (let i = 0; i < 10; i++) add(value);
  // 49 bytes of batch header + 3 records = 349; a fourth would make 449 > 400.
  assert.equal(sent.length, 3, "three full batches leave at once, no linger");
  for (const b of sent) {
    assert.equal(b.count, 3);
    assert.ok(b.records.length <= 400);
  }
});

test("lingerMs holds a batch until the shared timer fires", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { sent, add } = setup({ lingerMs: 20 });
  add("a");
  add("b", 1);
  t.mock.timers.tick(19);
  assert.equal(sent.length, 0);
  t.mock.timers.tick(1);
  assert.equal(sent.length, 2, "every open batch becomes due");
  add("c");
  assert.equal(sent.length, 2);
  t.mock.timers.tick(20);
  assert.equal(sent.length, 3);
});

test("at most maxInFlight batches per partition; the open batch keeps growing meanwhile", async () => {
  const { acc, sent, add } = setup({ maxInFlight: 2 });
  add("1");
  await tick();
  add("2");
  await tick();
  add("3");
  await tick();
  add("4");
  await tick();
  assert.equal(sent.length, 2);
  acc.done(sent[0]!);
  assert.equal(sent.length, 3);
  assert.deepEqual(values(sent[2]!), ["3", "4"], "records that waited went out as one batch");
  add("p1", 1);
  await tick();
  assert.equal(sent.length, 4, "other partitions have their own slots");
});

test("memory: hasRoom turns false at bufferBytes and done() gives it back", async () => {
  const { acc, sent, add, results } = setup({ bufferBytes: 1000, batchBytes: 300 });
  let rooms = 0;
  acc.onRoom = () => rooms++;
  const value = "v".repeat(100 - HEADER_SIZE);
  assert.ok(acc.hasRoom(100));
  let appended = 0;
  while (acc.hasRoom(100)) {
    add(value);
    appended++;
  }
  assert.ok(acc.usedBytes <= 1000 && acc.usedBytes + 100 > 1000, `used ${acc.usedBytes}`);
  await tick();
  const first = sent[0]!;
  first.complete(10);
  acc.done(first);
  assert.equal(rooms, 1);
  assert.ok(acc.hasRoom(100));
  assert.equal(results.length, first.count);
  assert.deepEqual(results[1], { partition: 0, offset: 11 });
  for (const b of sent.slice(1)) {
    b.complete(0);
    acc.done(b);
  }
  assert.equal(acc.usedBytes, 0);
  assert.equal(results.length, appended);
});

test("pressure makes open batches due at once", () => {
  const { acc, sent, add } = setup({ lingerMs: 60_000 });
  add("a");
  assert.equal(sent.length, 0);
  acc.pressure = true;
  assert.equal(sent.length, 1);
});

test("retried batches go back in front in creation order, after their pause", async () => {
  const { acc, sent, add } = setup({ maxInFlight: 3 });
  for (const v of ["a", "b", "c"]) {
    add(v);
    await tick();
  }
  const [a, b, c] = sent as [ProducerBatch, ProducerBatch, ProducerBatch];
  sent.length = 0;
  acc.retry(c, 30);
  acc.retry(b, 30);
  acc.retry(a, 30);
  add("d");
  await tick();
  assert.equal(sent.length, 0, "the partition is paused, new batches included");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(
    sent.map((x) => values(x)[0]),
    ["a", "b", "c"],
  );
  assert.equal(a.attempts, 2);
  acc.done(a);
  assert.deepEqual(values(sent[3]!), ["d"]);
  acc.stop();
});

test("failUnsent rejects waiting and open batches and frees their memory", () => {
  const { acc, sent, add, results } = setup({ lingerMs: 60_000, maxInFlight: 1, batchBytes: 200 });
  // 49 + 79 + 79 > 200: one record per batch; the first goes out, five wait.
  for (let i = 0; i < 6; i++) add("y".repeat(50));
  assert.equal(sent.length, 1);
  const err = new Error("closed") as unknown as ConchError;
  acc.failUnsent(err);
  assert.equal(results.length, 5);
  assert.ok(results.every((r) => r === err));
  assert.equal(acc.usedBytes, sent[0]!.bytes, "only the in-flight batch still holds memory");
});

test("small batches in flight over many partitions hold no encode buffer each, and keep their bytes", async () => {
  const { sent, add } = setup();
  const partitions = 1000;
  for (let p = 0; p < partitions; p++) add(`first-${p}`, p);
  await Promise.resolve();
  assert.equal(sent.length, partitions);
  // Each batch of one record is copied out of its encode buffer when sealed: the 1,000 batches in
  // flight share a few slabs instead of holding 1,000 encode buffers.
  const arrayBuffers = new Set(sent.map((b) => b.records.buffer));
  assert.ok(
    arrayBuffers.size <= partitions / 20,
    `${arrayBuffers.size} distinct buffers behind 1,000 batches`,
  );
  // The encode buffers went back to the pool and are reused for the next send's batches, while
  // the first ones are still in flight: those must keep their own bytes.
  for (let p = 0; p < partitions; p++) add(`second-${p}`, p);
  await Promise.resolve();
  for (let p = 0; p < partitions; p++) assert.deepEqual(values(sent[p]!), [`first-${p}`]);
});

test("partitions far apart, up to 2^32 - 1, get queues of their own at once (no array grown to the largest)", async () => {
  const { sent, add } = setup();
  const started = performance.now();
  for (const partition of [0xffffffff, 7, 70_000, 0, 7]) add(`p${partition}`, partition);
  assert.ok(performance.now() - started < 1000, "no array of billions of slots was filled");
  await Promise.resolve();
  const byPartition = new Map(sent.map((b) => [b.partition, values(b)]));
  assert.deepEqual(
    [...byPartition].sort((x, y) => x[0] - y[0]),
    [
      [0, ["p0"]],
      [7, ["p7", "p7"]],
      [70_000, ["p70000"]],
      [0xffffffff, ["p4294967295"]],
    ],
  );
});

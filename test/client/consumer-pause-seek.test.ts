/**
 * Pausing and resuming partitions of a consumer, and a group member's seek, against a real broker:
 * a paused partition is not fetched and keeps what it had fetched for after the resume; a group
 * member's pause lasts while it owns the partition; a seek in a group moves the next message and
 * what the next commit stores; a group consumer's events are typed.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { ConsumerMessage, TopicPartition } from "../../src/client/consumer.js";
import type { GroupConsumer } from "../../src/client/group-consumer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { RealBroker } from "./real-broker.js";

async function setup(t: TestContext, partitions: number): Promise<Conch> {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  await conch.admin().createTopic("t", { partitions });
  return conch;
}

const label = (m: ConsumerMessage): string => `${m.partition}:${m.value.toString()}`;

/** The next `n` messages of an iterator left open, bounded in time. */
async function take(it: AsyncIterator<ConsumerMessage>, n: number): Promise<ConsumerMessage[]> {
  const out: ConsumerMessage[] = [];
  const signal = AbortSignal.timeout(10_000);
  while (out.length < n) {
    if (signal.aborted) throw new Error(`read ${out.length} of ${n} messages`);
    const r = await it.next();
    if (r.done) throw new Error(`the iterator ended after ${out.length} messages`);
    out.push(r.value);
  }
  return out;
}

const p0: TopicPartition = { topic: "t", partition: 0 };
const p1: TopicPartition = { topic: "t", partition: 1 };

test("a paused partition is not fetched; what it had fetched comes after the resume, in order", {
  timeout: 30_000,
}, async (t) => {
  const conch = await setup(t, 2);
  const producer = conch.producer();
  await producer.sendBatch("t", [
    { value: "a0", partition: 0 },
    { value: "a1", partition: 0 },
    { value: "a2", partition: 0 },
  ]);
  const consumer = conch.consumer({ partitions: [p0, p1] });
  const it = consumer.messages();
  assert.deepEqual((await take(it, 1)).map(label), ["0:a0"]);
  consumer.pause([p0]);
  assert.deepEqual(consumer.paused(), [p0]);
  // Written to the paused partition first, then to the other: only the other's is read.
  await producer.send("t", { value: "a3", partition: 0 });
  await producer.send("t", { value: "b0", partition: 1 });
  assert.deepEqual((await take(it, 1)).map(label), ["1:b0"], "a1, a2 (fetched) and a3 wait");
  consumer.resume([p0]);
  assert.deepEqual(consumer.paused(), []);
  assert.deepEqual((await take(it, 3)).map(label), ["0:a1", "0:a2", "0:a3"]);
  assert.equal(consumer.position("t", 0), 4);
});

test("pause refuses a partition that is not assigned and then pauses none of those asked", {
  timeout: 30_000,
}, async (t) => {
  const conch = await setup(t, 2);
  const consumer = conch.consumer({ partitions: [p0] });
  assert.throws(
    () => consumer.pause([p0, p1]),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_REQUEST,
  );
  assert.deepEqual(consumer.paused(), []);
  consumer.resume([p1]); // not paused, not assigned: nothing to do
});

function member(conch: Conch): GroupConsumer {
  return conch.consumer({
    group: "g",
    topics: ["t"],
    autoCommit: false,
    maxWaitMs: 100,
    sessionTimeoutMs: 2000,
  });
}

test("a group member's seek moves its next message, and the next commit follows it", {
  timeout: 30_000,
}, async (t) => {
  const conch = await setup(t, 1);
  await conch.producer().sendBatch(
    "t",
    ["m0", "m1", "m2", "m3", "m4", "m5"].map((value) => ({ value })),
  );
  const m = member(conch);
  const it = m.messages();
  assert.deepEqual(
    (await take(it, 3)).map((x) => x.offset),
    [0, 1, 2],
  );
  // Forward, past the message in hand: committed at once, before anything is read from there.
  m.seek("t", 0, 4);
  await m.commit();
  assert.deepEqual(await conch.groups().fetchOffsets("g"), [{ topic: "t", partition: 0, offset: 4 }]);
  assert.deepEqual(
    (await take(it, 1)).map((x) => x.offset),
    [4],
  );
  // Back: the next commit goes back too, to the message in hand from there.
  m.seek("t", 0, 1);
  assert.deepEqual(
    (await take(it, 2)).map((x) => x.offset),
    [1, 2],
  );
  await m.commit();
  assert.deepEqual(await conch.groups().fetchOffsets("g"), [{ topic: "t", partition: 0, offset: 2 }]);
  assert.throws(
    () => m.seek("t", 7, 0),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_REQUEST,
  );
});

test("a group member's pause lasts while it owns the partition; events say what moved", {
  timeout: 30_000,
}, async (t) => {
  const conch = await setup(t, 2);
  const a = member(conch);
  const assigned: TopicPartition[][] = [];
  const revoked: TopicPartition[][] = [];
  a.on("assigned", (partitions) => assigned.push(partitions));
  a.on("revoked", (partitions) => revoked.push(partitions));
  // Typed: a listener of the wrong shape, or an event that does not exist, does not compile.
  // @ts-expect-error the partitions are an array, not a number
  a.on("assigned", (n: number) => n);
  // @ts-expect-error no such event
  a.on("asigned", () => {});
  await a.start();
  assert.deepEqual(assigned, [[p0, p1]]);
  a.pause([p0, p1]);
  assert.deepEqual(a.paused(), [p0, p1]);

  const b = member(conch);
  const moved = new Promise<void>((resolve) => a.once("rebalance", () => resolve()));
  await b.start();
  await moved;
  const kept = a.assignment();
  assert.equal(kept.length, 1);
  const gone = kept[0]!.partition === 0 ? p1 : p0;
  assert.deepEqual(revoked, [[gone]]);
  assert.deepEqual(a.paused(), kept, "the kept partition stays paused; the pause went with the other");
  await conch.producer().send("t", { value: "x", partition: gone.partition });
  assert.deepEqual(
    (await take(b.messages(), 1)).map(label),
    [`${gone.partition}:x`],
    "the new owner reads it",
  );
});

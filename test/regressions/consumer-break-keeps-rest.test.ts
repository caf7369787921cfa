/**
 * Breaking out of a `for await` loop in the middle of a fetched batch keeps the rest of the batch
 * for the next iteration: a consumer's position is the next message not yet handed to the
 * application, and a group commits only what was handed out. It used to drop the batch's rest
 * (the partition had already fetched past it), so `b` and `c` below were never seen, and a group
 * then committed past them.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { Consumer, ConsumerBatch } from "../../src/client/consumer.js";
import type { GroupConsumer } from "../../src/client/group-consumer.js";
import { RealBroker } from "../client/real-broker.js";

async function setup(t: TestContext): Promise<Conch> {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  await conch.admin().createTopic("t");
  await conch.producer().sendBatch("t", [{ value: "a" }, { value: "b" }, { value: "c" }]);
  return conch;
}

/** Values of the messages up to and including `last`. */
async function readTo(consumer: AsyncIterable<{ value: Buffer }>, last: string): Promise<string[]> {
  const out: string[] = [];
  for await (const m of consumer) {
    out.push(m.value.toString());
    if (out.at(-1) === last) break;
  }
  return out;
}

/** Record values of batches up to the one holding `last`. */
async function batchesTo(iterator: AsyncIterable<ConsumerBatch>, last: string): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of iterator) {
    const c = batch.cursor();
    while (c.next()) out.push(c.value().toString());
    if (out.includes(last)) break;
  }
  return out;
}

test("a consumer broken out of after one message yields the rest of the batch next time", {
  timeout: 20_000,
}, async (t) => {
  const conch = await setup(t);
  const consumer: Consumer = conch.consumer({ topics: ["t"] });
  assert.deepEqual(await readTo(consumer, "a"), ["a"]);
  assert.equal(consumer.position("t", 0), 1, "the position is the next message not handed out");
  await conch.producer().sendBatch("t", [{ value: "d" }, { value: "e" }]);
  assert.deepEqual(await readTo(consumer, "e"), ["b", "c", "d", "e"]);
});

test("batches() after a broken message loop starts with the rest of the batch", {
  timeout: 20_000,
}, async (t) => {
  const conch = await setup(t);
  const consumer: Consumer = conch.consumer({ topics: ["t"] });
  assert.deepEqual(await readTo(consumer, "a"), ["a"]);
  // Nothing more is produced: this used to wait for ever.
  assert.deepEqual(await batchesTo(consumer.batches(), "c"), ["b", "c"]);
  assert.equal(consumer.position("t", 0), 3);
});

test("a group member broken out of after one message reads the rest and commits only what it handed out", {
  timeout: 20_000,
}, async (t) => {
  const conch = await setup(t);
  const member: GroupConsumer = conch.consumer({ group: "g", topics: ["t"], autoCommit: false });
  assert.deepEqual(await readTo(member, "a"), ["a"]);
  await member.commit();
  await conch.producer().sendBatch("t", [{ value: "d" }, { value: "e" }]);
  assert.deepEqual(await readTo(member, "d"), ["b", "c", "d"]);
  await member.commit();
  const offsets = await conch.groups().fetchOffsets("g");
  assert.deepEqual(offsets, [{ topic: "t", partition: 0, offset: 3 }], "up to c, the last processed");
  assert.deepEqual(await batchesTo(member.batches(), "e"), ["e"], "d was handed out");
});

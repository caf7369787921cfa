/**
 * The waits of the consumers take a signal of their own: aborting it ends that wait with ABORTED,
 * and the consumer carries on (a later wait without a signal completes).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import { GroupConsumer } from "../../src/client/group-consumer.js";
import { ErrorCode } from "../../src/format/errors.js";
import { conchError, fill, serve } from "./helpers.js";

const aborted = conchError(ErrorCode.ABORTED);

test("GroupConsumer: ready, start and commit end with ABORTED on their signal; the member carries on", async (t) => {
  const served = await serve(t);
  await served.broker.createTopic("orders", 2);
  await fill(served.broker, "orders", 2, 5);
  const m = served.track(
    new GroupConsumer(
      { brokers: [served.address], clientId: "test" },
      { group: "g", topics: ["orders"], sessionTimeoutMs: 1500, maxWaitMs: 100, autoCommit: false },
    ),
  );
  // Joining needs the network: an abort right after the call always comes first.
  const ac = new AbortController();
  const waiting = m.ready({ signal: ac.signal });
  ac.abort();
  await assert.rejects(waiting, aborted);
  await assert.rejects(m.start({ signal: AbortSignal.abort() }), aborted);
  await m.ready();
  await m.start();
  assert.equal(m.assignment().length, 2, "the join went on after the aborted waits");

  const iterator = m.messages();
  const first = await iterator.next();
  assert.equal(first.done, false);
  await assert.rejects(m.commit(first.value, { signal: AbortSignal.abort() }), aborted);
  await m.commit(first.value);
});

test("Consumer.start ends with ABORTED on its signal; a later start resolves", async (t) => {
  const served = await serve(t);
  await served.broker.createTopic("orders", 1);
  const client = served.track(createClient({ brokers: [served.address] }));
  const consumer = client.consumer({ partitions: [{ topic: "orders", partition: 0, from: "latest" }] });
  await assert.rejects(consumer.start({ signal: AbortSignal.abort() }), aborted);
  await consumer.start();
  await consumer.close();
});

/**
 * TestClients, what keeps kafkajs clients from outliving their test: they are disconnected while
 * the broker is still up, and a kafkajs consumer that crashes stays down (kafkajs's default
 * restarts it for ever, which kept test files' processes from ending).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Consumer } from "kafkajs";
import { startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

/** Resolves once `consumer` has joined its group (after run). */
function joined(consumer: Consumer): Promise<void> {
  return new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
}

test("test clients: a kafkajs consumer is disconnected before its broker stops", async (t) => {
  const order: string[] = [];
  await t.test("a consumer left running", async (st) => {
    const clients = new TestClients(st);
    const f = await startKafka(st);
    // Registered after startKafka's teardown, so run after it.
    st.after(() => order.push("broker stopped"));
    await f.broker.createTopic("tc-order", 1);
    const consumer = clients.kafkajs(f.bootstrap).consumer({ groupId: "tc-order", maxWaitTimeInMs: 100 });
    consumer.on(consumer.events.DISCONNECT, () => order.push("consumer disconnected"));
    const join = joined(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: "tc-order" });
    await consumer.run({ eachMessage: async () => {} });
    await join;
  });
  assert.deepEqual(order, ["consumer disconnected", "broker stopped"]);
});

test("test clients: a kafkajs consumer whose broker went away crashes and is not restarted", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("tc-crash", 1);
  const consumer = clients.kafkajs(f.bootstrap).consumer({
    groupId: "tc-crash",
    maxWaitTimeInMs: 100,
    retry: { retries: 0 },
  });
  const join = joined(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic: "tc-crash" });
  await consumer.run({ eachMessage: async () => {} });
  await join;
  const crashed = new Promise<{ restart: boolean }>((resolve) => {
    consumer.on(consumer.events.CRASH, (e) => resolve(e.payload));
  });
  await f.server.close();
  assert.equal((await crashed).restart, false);
});

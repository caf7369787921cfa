/**
 * What a change of replicas or leader does to the replica side, on in-process brokers with roles
 * handed out by hand (replica-cluster.ts): a produce waiting for acks "all" on a leader that stops
 * leading is answered NOT_LEADER at once rather than at its timeout, and a replica added within the
 * leader's epoch (a reassignment's first step) is followed, caught up and taken into the ISR.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { makeBatch } from "../storage/helpers.js";
import { batchCrcs, role, startCluster, until } from "./replica-cluster.js";

const TOPIC = "handover";

test("a produce waiting for acks all on a leader that hands over is answered NOT_LEADER at once, not at its timeout", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { lagTimeMaxMs: 60_000 });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const leader = cluster.node(1).broker;
  await leader.produce(TOPIC, 0, makeBatch("before"), "all");
  // Broker 2 stops following: the next acks all produce waits for it (the lag time is long).
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  const started = performance.now();
  const waiting = leader.produce(TOPIC, 0, makeBatch("in-flight"), "all", 30_000);
  const outcome = waiting.then(
    () => "acknowledged",
    (err: unknown) => (err instanceof ConchError ? err.code : -1),
  );
  await new Promise((r) => setTimeout(r, 100));
  // The leadership moves to broker 2 (epoch 2): broker 1 follows now.
  await cluster.apply(role(TOPIC, 2, 2, [1, 2], [2]), [1]);
  assert.equal(await outcome, ErrorCode.NOT_LEADER);
  const waited = performance.now() - started;
  assert.ok(waited < 5_000, `answered after ${waited.toFixed(0)} ms`);
});

test("a replica added within the leader's epoch follows, catches up, joins the ISR and ends identical", async (t) => {
  const cluster = await startCluster(t, [1, 2, 3], TOPIC);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const leader = cluster.node(1).broker;
  for (let i = 0; i < 20; i++) await leader.produce(TOPIC, 0, makeBatch(`m${i}`, 3), "all");
  // The reassignment's first step: replicas 3, 2 and (still) 1, the ISR as it was, the same epoch.
  await cluster.apply(role(TOPIC, 1, 1, [3, 2, 1], [1, 2]));
  await until(
    () => cluster.proposals.some((x) => x.brokerId === 1 && x.isr.includes(3)),
    "the leader to propose broker 3 for the ISR",
  );
  await cluster.apply(role(TOPIC, 1, 1, [3, 2, 1], [1, 2, 3]));
  const ack = await leader.produce(TOPIC, 0, makeBatch("after"), "all");
  const end = ack.lastOffset + 1;
  await until(() => cluster.node(3).broker.partition(TOPIC, 0).logEndOffset >= end, "broker 3 caught up");
  const expected = await batchCrcs(leader.partition(TOPIC, 0), end);
  assert.deepEqual(await batchCrcs(cluster.node(3).broker.partition(TOPIC, 0), end), expected);
  assert.deepEqual(await batchCrcs(cluster.node(2).broker.partition(TOPIC, 0), end), expected);
});

/**
 * SIGKILL of the controller broker under acks=all load (fault-cluster.ts): the load goes to the
 * partition the controller leads, so its death costs both the controller and a leadership. Another
 * broker must become controller, move that leadership, and the writes go on; every acknowledged
 * record is read back at its offset and the replicas end identical.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { assertVerified } from "./fault-checks.js";
import { FAULT_TOPIC, FaultCluster } from "./fault-cluster.js";

test("SIGKILL of the controller: a new controller moves its leaderships and acks=all writes go on", {
  skip: skipWithoutEtcd,
  timeout: 60_000,
}, async (t) => {
  const c = await FaultCluster.start({
    clusterId: "kill-controller",
    partitions: 3,
    // The partition the controller leads (leaders are spread over the three brokers).
    loadPartition: (m) =>
      Math.max(
        0,
        m.topics
          .find((x) => x.name === FAULT_TOPIC)
          ?.partitions.findIndex((x) => x.leaderId === m.controllerId) ?? 0,
      ),
    log: (line) => t.diagnostic(line),
  });
  try {
    await c.moreAcks(20);
    const before = await c.state();
    const controllerId = before?.controllerId ?? -1;
    assert.ok(controllerId >= 0, "a controller");
    assert.equal(before?.leaderId, controllerId, "the controller leads the loaded partition");
    const killedAt = performance.now();
    await c.broker(controllerId).kill();
    c.down.add(controllerId);
    await c.waitFor(
      "another controller",
      (s) => s.controllerId >= 0 && s.controllerId !== controllerId,
      15_000,
      killedAt,
    );
    await c.waitFor(
      "the controller's leadership moved, the dead broker out of the ISR",
      (s) => s.leaderId >= 0 && s.leaderId !== controllerId && !s.isr.includes(controllerId),
      15_000,
      killedAt,
    );
    await c.firstAckAfter("first acknowledgement after the kill", killedAt, 20_000);
    await c.moreAcks(20);
    // No partition is left on the dead broker.
    const m = await c.metadata();
    const leaders = m?.topics.find((x) => x.name === FAULT_TOPIC)?.partitions.map((x) => x.leaderId) ?? [];
    assert.equal(leaders.length, 3);
    for (const id of leaders) assert.ok(id >= 0 && id !== controllerId, `leaders ${leaders.join(",")}`);
    const restartedAt = performance.now();
    await c.restart(controllerId);
    await c.waitFor("the restarted broker back in the ISR", (s) => s.isr.length === 3, 20_000, restartedAt);
    assertVerified(await c.verify());
  } finally {
    await c.stop();
  }
});

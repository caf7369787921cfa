/**
 * SIGSTOP of a follower past replica.lag.time.max.ms (1 s here) but within its lease (5 s here),
 * under acks=all load (fault-cluster.ts): the leader drops it from the ISR (the change is in etcd,
 * so every broker's Metadata shows it), acks=all writes go on with the two left (min.insync.replicas
 * 2), and once woken it catches up and the leader takes it back into the ISR.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { assertFollowerDropped, assertVerified } from "./fault-checks.js";
import { FaultCluster } from "./fault-cluster.js";

const LAG_MS = 1000;

test("SIGSTOP of a follower past the lag time: the ISR shrinks, writes go on, and after SIGCONT it rejoins", {
  skip: skipWithoutEtcd,
  timeout: 60_000,
}, async (t) => {
  const c = await FaultCluster.start({
    clusterId: "pause-follower",
    leaseTtlSeconds: 5,
    args: () => ["--replica-lag-time-max-ms", String(LAG_MS)],
    log: (line) => t.diagnostic(line),
  });
  try {
    await c.moreAcks(20);
    const before = await c.state();
    assert.ok(before !== null && before.isr.length === 3);
    const followerId = before.isr.find((id) => id !== before.leaderId) ?? -1;
    const follower = c.broker(followerId);
    const pausedAt = performance.now();
    follower.pause();
    c.down.add(followerId);
    await assertFollowerDropped(c, before, followerId, `follower ${followerId} paused`, pausedAt);
    const wokenAt = performance.now();
    follower.resume();
    c.down.delete(followerId);
    await c.waitFor(
      `follower ${followerId} woken, back in the ISR`,
      (s) => s.isr.includes(followerId),
      20_000,
      wokenAt,
    );
    assert.ok(
      !follower.recent.some((line) => line.includes("fenced")),
      "the follower kept its lease (the pause was shorter than it)",
    );
    assertVerified(await c.verify());
  } finally {
    await c.stop();
  }
});

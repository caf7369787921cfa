/**
 * SIGKILL of one etcd member of three, the Raft leader, under acks=all load (fault-cluster.ts):
 * the brokers have all three endpoints, the two members left elect a leader and keep the quorum,
 * and etcd's new leader extends every lease, so no broker's lease ends and nothing fails over: no
 * leader change, no new epoch, no ISR change, no lease lost, no broker registered again; the writes
 * go on. With a lease TTL longer than the election no broker even fences itself. At the default
 * 2 s the election can outlast a broker's own deadline: it fences itself (it cannot know the lease
 * lives) and asks etcd (LeaseTimeToLive) until the new leader answers that it does, then leads on.
 * The same holds when etcd has no quorum for longer than two lease TTLs (a second member paused
 * right after the kill): the brokers fence themselves meanwhile, and lead on once etcd answers.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { assertVerified } from "./fault-checks.js";
import { FaultCluster } from "./fault-cluster.js";

interface Fault {
  readonly leaseTtlSeconds: number;
  readonly fenceAllowed: boolean;
  /** How long a second member is paused right after the kill (etcd without a quorum), if at all. */
  readonly quorumLostMs?: number;
}

/** Kills etcd's leading member under load and checks that no broker's lease counted as lost. */
async function killEtcdLeader(t: TestContext, f: Fault): Promise<void> {
  const { leaseTtlSeconds, fenceAllowed } = f;
  const c = await FaultCluster.start({
    clusterId: `kill-etcd-${leaseTtlSeconds}`,
    etcdMembers: 3,
    leaseTtlSeconds,
    log: (line) => t.diagnostic(line),
  });
  try {
    await c.moreAcks(20);
    const before = await c.state();
    assert.ok(before !== null && before.isr.length === 3);
    const member = await c.etcd.leaderIndex();
    const killedAt = performance.now();
    c.etcd.kill(member);
    if (f.quorumLostMs !== undefined) {
      const other = (member + 1) % 3;
      c.etcd.pause(other, true);
      // Waiting out the outage is the fault itself: there is no event to await.
      await new Promise((resolve) => setTimeout(resolve, f.quorumLostMs));
      c.etcd.pause(other, false);
      t.diagnostic(`etcd member ${other} paused ${f.quorumLostMs} ms: no quorum meanwhile`);
    }
    const faultEnded = performance.now();
    await c.firstAckAfter(
      f.quorumLostMs === undefined
        ? `etcd member ${member} (the Raft leader) killed: first acknowledgement after`
        : "etcd's quorum back: first acknowledgement after",
      faultEnded,
      15_000,
    );
    // Two lease TTLs and more: a lease counted as lost (or a fence that stayed) shows by then, and
    // a broker registered again waits out its old lease before the controller sees it gone.
    while (performance.now() < faultEnded + Math.max(2 * leaseTtlSeconds, 8) * 1000) await c.moreAcks(10);
    const after = await c.state();
    assert.equal(after?.leaderId, before.leaderId, "no leader change");
    assert.equal(after?.leaderEpoch, before.leaderEpoch, "no new epoch");
    assert.equal(after?.isr.length, 3, "no ISR change");
    for (const b of c.brokers) {
      const lines = b.recent.filter(
        (line) =>
          line.includes("lease lost") ||
          line.includes("gone (its lease ended)") ||
          (!fenceAllowed && line.includes("fenced")),
      );
      assert.deepEqual(lines, [], `broker ${b.brokerId} lost its lease (or fenced itself)`);
      const fences = b.recent.filter((line) => line.includes("fenced")).length;
      if (fences > 0)
        t.diagnostic(`broker ${b.brokerId} fenced itself ${fences} time(s), and the fence lifted`);
    }
    t.diagnostic(
      `longest time without an acknowledgement after the kill: ${c.longestAckGap(killedAt).toFixed(0)} ms`,
    );
    assertVerified(await c.verify());
  } finally {
    await c.stop();
  }
}

test("SIGKILL of the leading etcd member of three at a 5 s lease: no fence, no failover, acks=all writes go on", {
  skip: skipWithoutEtcd,
  timeout: 60_000,
}, async (t) => {
  // Longer than etcd's election here (about 1 to 2 s): no keepalive answer comes later than the deadline.
  await killEtcdLeader(t, { leaseTtlSeconds: 5, fenceAllowed: false });
});

test("SIGKILL of the leading etcd member of three at the default 2 s lease: no lease lost, no failover, acks=all writes go on", {
  skip: skipWithoutEtcd,
  timeout: 60_000,
}, async (t) => {
  await killEtcdLeader(t, { leaseTtlSeconds: 2, fenceAllowed: true });
});

test("etcd without a quorum for 5 s (its leader killed, another member paused) at the default 2 s lease: fenced meanwhile, then no lease lost, no failover", {
  skip: skipWithoutEtcd,
  timeout: 90_000,
}, async (t) => {
  await killEtcdLeader(t, { leaseTtlSeconds: 2, fenceAllowed: true, quorumLostMs: 5_000 });
});

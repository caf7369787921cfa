/** The checks every fault test ends with (fault-cluster.ts `verify()`). */
import assert from "node:assert/strict";
import type { FaultCluster, PartitionState, Verified } from "./fault-cluster.js";

/**
 * After a fault that cuts one follower off (`what` happened at `since`): it leaves the ISR, the
 * writes go on with the others, and the leadership stays as it was (no new leader, no new epoch).
 * Returns the state then.
 */
export async function assertFollowerDropped(
  c: FaultCluster,
  before: PartitionState,
  followerId: number,
  what: string,
  since: number,
): Promise<PartitionState | null> {
  await c.waitFor(`${what}, ${followerId} out of the ISR`, (s) => !s.isr.includes(followerId), 15_000, since);
  await c.firstAckAfter(`first acknowledgement after: ${what}`, since, 15_000);
  await c.moreAcks(50);
  const during = await c.state();
  assert.equal(during?.leaderId, before.leaderId, "no leader change");
  assert.equal(during?.leaderEpoch, before.leaderEpoch, "no new epoch");
  return during;
}

/** Something was acknowledged, every acknowledged record is on every replica at its offset, and the replicas are identical. */
export function assertVerified(v: Verified): void {
  assert.ok(v.acked > 0, "nothing was acknowledged");
  for (const [brokerId, missing] of v.missing) {
    assert.deepEqual(
      missing.slice(0, 10),
      [],
      `broker ${brokerId} lacks ${missing.length} acknowledged record(s)`,
    );
  }
  assert.ok((v.replicas[0]?.length ?? 0) > 0, "no batches");
  assert.deepEqual(v.replicas[1], v.replicas[0], "replica 2 differs from replica 1");
  assert.deepEqual(v.replicas[2], v.replicas[0], "replica 3 differs from replica 1");
}

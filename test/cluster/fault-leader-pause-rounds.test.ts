/**
 * SIGSTOP of the leader past its lease, then SIGCONT, three rounds in a row under acks=all load
 * (fault-cluster.ts). Each woken broker must register again under a new lease and rejoin the ISR
 * as a follower before the next round pauses the next leader; this hung at the second or third
 * round when a woken broker's registration never finished (docs/cluster.md, "Fault tests").
 */
import { test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { assertVerified } from "./fault-checks.js";
import { FaultCluster } from "./fault-cluster.js";

test("three SIGSTOP/SIGCONT rounds of the leader: each woken broker rejoins the ISR and nothing acknowledged is lost", {
  skip: skipWithoutEtcd,
  timeout: 75_000,
}, async (t) => {
  const c = await FaultCluster.start({
    clusterId: "pause-rounds",
    args: () => ["--log-level", "debug"],
    log: (line) => t.diagnostic(line),
  });
  try {
    for (let round = 1; round <= 3; round++) {
      await c.waitFor(`round ${round}: full ISR`, (s) => s.isr.length === 3 && s.leaderId >= 0, 20_000);
      await c.moreAcks(20);
      const leaderId = (await c.state())?.leaderId ?? -1;
      const victim = c.broker(leaderId);
      const pausedAt = performance.now();
      victim.pause();
      c.down.add(leaderId);
      await c.waitFor(
        `round ${round}: broker ${leaderId} paused, another leader elected`,
        (s) => s.leaderId >= 0 && s.leaderId !== leaderId,
        15_000,
        pausedAt,
      );
      await c
        .firstAckAfter(`round ${round}: first acknowledgement after the pause`, pausedAt, 30_000)
        .catch(async (err: unknown) => {
          t.diagnostic(JSON.stringify(await c.state()));
          throw err;
        });
      // Twice the lease TTL (2 s): its lease has surely expired when it wakes.
      const wait = pausedAt + 4_000 - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const wokenAt = performance.now();
      victim.resume();
      c.down.delete(leaderId);
      await c
        .waitFor(
          `round ${round}: broker ${leaderId} woken, back in the ISR`,
          (s) => s.isr.length === 3,
          25_000,
          wokenAt,
        )
        .catch((err: unknown) => {
          t.diagnostic(victim.recent.slice(-40).join("\n"));
          throw err;
        });
    }
    assertVerified(await c.verify());
  } finally {
    await c.stop();
  }
});

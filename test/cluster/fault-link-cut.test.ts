/**
 * A cut link between a follower and its leader, under acks=all load (fault-cluster.ts): each
 * broker advertises (`--advertised-port`) an in-test TCP proxy in front of its native port, so
 * followers reach their leader through it, and the test cuts one follower's connections at the
 * leader's proxy (destroyed, new ones refused) while the other follower's stay. The leader drops
 * the cut follower from the ISR after replica.lag.time.max.ms (1 s here), acks=all writes go on
 * with the two left, and once the link is restored the follower catches up and rejoins the ISR.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { assertFollowerDropped, assertVerified } from "./fault-checks.js";
import { FaultCluster } from "./fault-cluster.js";
import { TcpProxy } from "./tcp-proxy.js";

const LAG_MS = 1000;

test("a cut link between a follower and its leader: the ISR shrinks, writes go on, and after restore it rejoins", {
  skip: skipWithoutEtcd,
  timeout: 60_000,
}, async (t) => {
  const proxies = new Map<number, TcpProxy>();
  for (let id = 1; id <= 3; id++) proxies.set(id, await TcpProxy.start());
  let c: FaultCluster | null = null;
  try {
    c = await FaultCluster.start({
      clusterId: "cut-link",
      started: (b) => {
        const proxy = proxies.get(b.brokerId);
        if (proxy !== undefined) proxy.targetPort = b.port;
      },
      args: (id) => [
        "--replica-lag-time-max-ms",
        String(LAG_MS),
        "--advertised-port",
        String(proxies.get(id)?.port),
      ],
      log: (line) => t.diagnostic(line),
    });
    await c.moreAcks(20);
    const before = await c.state();
    assert.ok(before !== null && before.isr.length === 3);
    const followerId = before.isr.find((id) => id !== before.leaderId) ?? -1;
    const proxy = proxies.get(before.leaderId);
    assert.ok(proxy !== undefined);
    const cutAt = performance.now();
    proxy.cut(TcpProxy.containing(`conch-replica-${followerId}`));
    assert.ok(proxy.refused > 0, "the follower's fetch connection went through the proxy");
    const during = await assertFollowerDropped(
      c,
      before,
      followerId,
      `link ${followerId} -> leader ${before.leaderId} cut`,
      cutAt,
    );
    assert.equal(during?.isr.length, 2, "the other follower stays in the ISR");
    const refusedWhileCut = proxy.refused;
    const restoredAt = performance.now();
    proxy.restore();
    await c.waitFor(
      `link restored, ${followerId} back in the ISR`,
      (s) => s.isr.includes(followerId),
      20_000,
      restoredAt,
    );
    t.diagnostic(`connections of follower ${followerId} destroyed or refused while cut: ${refusedWhileCut}`);
    assertVerified(await c.verify());
  } finally {
    await c?.stop();
    for (const proxy of proxies.values()) await proxy.close();
  }
});

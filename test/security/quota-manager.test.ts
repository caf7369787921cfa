import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import { QuotaManager } from "../../src/security/quota-manager.js";
import { FakeClock, isCode } from "./helpers.js";

function manager(clock: FakeClock, maxEntries = 100_000): QuotaManager {
  return new QuotaManager({
    windowMs: 1000,
    maxThrottleMs: 5_000,
    idleMs: 10_000,
    maxEntries,
    now: clock.now,
  });
}

describe("QuotaManager", () => {
  test("without a quota nothing is throttled and nothing is kept", () => {
    const q = manager(new FakeClock());
    for (let i = 0; i < 100; i++) assert.equal(q.recordProduce(`User:u${i}`, `c${i}`, 1e9), 0);
    assert.equal(q.size, 0);
  });

  test("a burst of one window passes; past it the throttle is the time the rate needs to pay the debt", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota("User:alice", { produceBytesPerSec: 1000 });
    assert.equal(q.recordProduce("User:alice", "app", 1000), 0);
    assert.equal(q.recordProduce("User:alice", "app", 500), 500);
    clock.advance(500);
    assert.equal(q.recordProduce("User:alice", "app", 0), 0, "paid back after 500 ms");
    assert.equal(q.recordProduce("User:alice", "app", 2000), 2000);
    assert.equal(q.recordFetch("User:alice", "app", 1e6), 0, "fetch has its own (absent) quota");
    assert.equal(q.recordProduce("User:bob", "app", 1e6), 0, "another principal");
  });

  test("a client that honours the throttle settles at its quota", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota("User:alice", { fetchBytesPerSec: 10_000 });
    const start = clock.ms;
    let sent = 0;
    while (clock.ms - start < 100_000) {
      const throttle = q.recordFetch("User:alice", "app", 3_000);
      sent += 3_000;
      clock.advance(throttle + 1);
    }
    const rate = sent / ((clock.ms - start) / 1000);
    assert.ok(rate > 9_900 && rate < 10_200, `settled at ${rate.toFixed(0)} B/s`);
  });

  test("principal and client id quotas both apply; the longer throttle wins; own quotas beat defaults", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota(null, { produceBytesPerSec: 1000 });
    q.setPrincipalQuota("User:big", { produceBytesPerSec: 100_000 });
    q.setClientIdQuota("slow-app", { produceBytesPerSec: 100 });
    assert.equal(q.recordProduce("User:anyone", "app", 2000), 1000, "the principal default");
    assert.equal(q.recordProduce("User:big", "app", 2000), 0, "its own quota");
    assert.equal(q.recordProduce("User:big", "slow-app", 200), 1000, "the client id's quota is the tighter");
    assert.deepEqual(q.quotas(), {
      principals: { "User:big": { produceBytesPerSec: 100_000 } },
      clientIds: { "slow-app": { produceBytesPerSec: 100 } },
      principalDefault: { produceBytesPerSec: 1000 },
      clientIdDefault: null,
    });
  });

  test("the request rate is capped the same way", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setClientIdQuota(null, { requestsPerSec: 10 });
    const throttles = Array.from({ length: 12 }, () => q.recordRequest("User:a", "c"));
    assert.deepEqual(throttles, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 200]);
  });

  test("quotas change live: a lower rate throttles the next request, a removed quota frees it", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota("User:alice", { produceBytesPerSec: 1_000_000 });
    assert.equal(q.recordProduce("User:alice", "app", 100_000), 0);
    q.setPrincipalQuota("User:alice", { produceBytesPerSec: 1000 });
    // The bucket keeps its tokens (900 000), clamped to the new window (1000): 99 000 over.
    assert.equal(q.recordProduce("User:alice", "app", 100_000), 5_000, "capped at maxThrottleMs");
    q.setPrincipalQuota("User:alice", null);
    assert.equal(q.recordProduce("User:alice", "app", 100_000), 0);
    assert.equal(q.size, 0, "the bucket went with its quota");
  });

  test("a throttle is capped, but the debt stays for a client that ignores it", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota("User:a", { produceBytesPerSec: 1000 });
    assert.equal(q.recordProduce("User:a", "c", 100_000), 5_000);
    clock.advance(5_000);
    assert.equal(q.recordProduce("User:a", "c", 0), 5_000, "94 s of debt left");
  });

  test("sweep drops idle buckets whose debt is paid, and keeps those in debt", () => {
    const clock = new FakeClock();
    const q = manager(clock);
    q.setPrincipalQuota(null, { produceBytesPerSec: 1000 });
    q.recordProduce("User:idle", "c", 10);
    q.recordProduce("User:owing", "c", 100_000);
    clock.advance(10_000);
    q.sweep();
    // One bucket left: User:owing's (client id "c" has no quota, so never had one).
    assert.equal(q.size, 1);
    assert.ok(q.recordProduce("User:owing", "c", 0) > 0);
  });

  test("buckets are bounded under a flood of client ids", () => {
    const clock = new FakeClock();
    const q = manager(clock, 1000);
    q.setClientIdQuota(null, { produceBytesPerSec: 1000 });
    for (let i = 0; i < 50_000; i++) q.recordProduce("User:a", `client-${i}`, 1);
    assert.equal(q.size, 1000);
  });

  test("a quota must be a positive number", () => {
    const q = manager(new FakeClock());
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => q.setPrincipalQuota("User:a", { produceBytesPerSec: bad }),
        isCode(ErrorCode.INVALID_CONFIG),
      );
    }
    assert.deepEqual(q.quotas().principals, {});
  });
});

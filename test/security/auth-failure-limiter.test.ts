import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addressKey } from "../../src/security/address-key.js";
import { AuthFailureLimiter, type AuthFailureSummary } from "../../src/security/auth-failure-limiter.js";
import { FakeClock } from "./helpers.js";

function limiter(
  clock: FakeClock,
  reports: AuthFailureSummary[] = [],
  maxEntries = 10_000,
): AuthFailureLimiter {
  return new AuthFailureLimiter({
    freeFailures: 3,
    baseDelayMs: 100,
    maxDelayMs: 1_000,
    forgetAfterMs: 60_000,
    maxEntries,
    now: clock.now,
    report: (s) => reports.push(s),
  });
}

describe("addressKey", () => {
  const cases: [string, string][] = [
    ["10.0.0.1", "10.0.0.1"],
    ["::ffff:10.0.0.1", "10.0.0.1"],
    ["::FFFF:10.0.0.1", "10.0.0.1"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002::9", "2001:db8:1:2::/64"],
    ["2001:db8::", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["64:ff9b::1.2.3.4", "64:ff9b:0:0::/64"],
    ["not an address", "not an address"],
  ];
  for (const [address, key] of cases) {
    test(`${address} counts as ${key}`, () => assert.equal(addressKey(address), key));
  }
});

describe("AuthFailureLimiter", () => {
  test("the first failures are free, then the spacing doubles up to the maximum", () => {
    const clock = new FakeClock();
    const l = limiter(clock);
    const delays = [];
    for (let i = 0; i < 9; i++) delays.push(l.failure("10.0.0.1", null));
    assert.deepEqual(delays, [0, 0, 0, 100, 200, 400, 800, 1000, 1000]);
    assert.equal(l.admit("10.0.0.2", null), 0, "another address is not slowed");
  });

  test("attempts under penalty are spaced, not let through together", () => {
    const clock = new FakeClock();
    const l = limiter(clock);
    for (let i = 0; i < 4; i++) l.failure("10.0.0.1", null);
    // Four connections try at the same instant: each gets its own slot, 100 ms apart.
    const waits = [0, 1, 2, 3].map(() => l.admit("10.0.0.1", null));
    assert.deepEqual(waits, [100, 200, 300, 400]);
    clock.advance(1_000);
    assert.equal(l.admit("10.0.0.1", null), 0, "slots in the past cost nothing");
  });

  test("one user tried from many addresses is slowed; a success clears the user, not the address", () => {
    const clock = new FakeClock();
    const l = limiter(clock);
    for (let i = 0; i < 5; i++) l.failure(`10.0.0.${i}`, "alice");
    assert.ok(l.admit("10.9.9.9", "alice") > 0, "the user is under penalty from a new address");
    assert.equal(l.admit("10.9.9.9", "bob"), 0);
    for (let i = 0; i < 5; i++) l.failure("10.0.0.200", "bob");
    l.success("10.0.0.200", "bob");
    clock.advance(10_000);
    l.failure("10.0.0.200", "carol");
    assert.ok(l.admit("10.0.0.200", null) > 0, "the address keeps its count");
    l.success("10.9.9.9", "alice");
    assert.equal(l.admit("10.9.9.9", "alice"), 0);
  });

  test("IPv6 addresses of one /64 share a count", () => {
    const clock = new FakeClock();
    const l = limiter(clock);
    for (let i = 1; i <= 4; i++) l.failure(`2001:db8:1:2::${i}`, null);
    assert.ok(l.admit("2001:db8:1:2:ffff::1", null) > 0);
    assert.equal(l.admit("2001:db8:1:3::1", null), 0);
  });

  test("memory stays bounded under a flood of addresses and names", () => {
    const clock = new FakeClock();
    const l = limiter(clock, [], 100);
    for (let i = 0; i < 10_000; i++) l.failure(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, `user-${i}`);
    assert.equal(l.size, 200);
    // The most recent ones are the ones kept.
    for (let i = 0; i < 3; i++) l.failure("10.0.39.15", null);
    assert.ok(l.admit("10.0.39.15", null) > 0);
  });

  test("sweep reports an interval's failures in one summary and forgets idle entries", () => {
    const clock = new FakeClock();
    const reports: AuthFailureSummary[] = [];
    const l = limiter(clock, reports);
    l.sweep();
    assert.deepEqual(reports, [], "nothing to report, no line");
    for (let i = 0; i < 6; i++) l.failure("10.0.0.1", "alice");
    l.failure("10.0.0.2", "bob");
    l.sweep();
    assert.deepEqual(reports, [
      { failures: 7, addresses: 2, users: 2, topAddress: "10.0.0.1", topAddressFailures: 6 },
    ]);
    l.sweep();
    assert.equal(reports.length, 1, "a quiet interval makes no line");
    assert.ok(l.admit("10.0.0.1", "alice") > 0);
    clock.advance(60_000);
    l.sweep();
    assert.equal(l.size, 0);
    assert.equal(l.admit("10.0.0.1", "alice"), 0);
  });
});

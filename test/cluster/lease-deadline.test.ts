import assert from "node:assert/strict";
import { test } from "node:test";
import { LeaseDeadline } from "../../src/cluster/lease-deadline.js";

// Times on performance.now()'s clock, in ms; a 2 s lease.
const TTL = 2;

function renewedAt(sentAt: number): LeaseDeadline {
  const d = new LeaseDeadline(TTL);
  d.renewed(sentAt + TTL * 1000);
  return d;
}

test("a keepalive answer holds the lease until its send time plus the TTL, and no later", () => {
  const d = renewedAt(1000);
  assert.equal(d.held(2999), true);
  assert.equal(d.held(3000), false);
  // An older keepalive's answer, coming late, moves nothing back.
  d.renewed(2000);
  assert.equal(d.validUntil, 3000);
});

test("etcd is asked once two keepalives in a row (a third of the TTL apart) went unanswered", () => {
  const d = renewedAt(1000);
  assert.ok(Math.abs(d.askAt() - (3000 - 2000 / 3)) < 1e-9);
});

test("an answer that the lease lives extends the deadline from when the question was sent", () => {
  const d = renewedAt(1000);
  // Asked at 2500, answered (whenever) with 2 s left: held until 4500, past the old deadline.
  assert.equal(d.answered(2500, 2), "extended");
  assert.equal(d.validUntil, 4500);
  assert.equal(d.held(3500), true);
  assert.equal(d.held(4500), false);
});

test("an answer counts no more than the TTL (a new etcd leader reports leases it has not taken over as never ending)", () => {
  const d = renewedAt(1000);
  assert.equal(d.answered(2500, 9_223_372_036), "extended");
  assert.equal(d.validUntil, 2500 + TTL * 1000);
});

test("an answer that leaves the deadline where it was moves nothing, 0 s left included", () => {
  const d = renewedAt(1000);
  assert.equal(d.answered(1500, 1), "unchanged");
  assert.equal(d.answered(2900, 0), "unchanged");
  assert.equal(d.validUntil, 3000);
  assert.equal(d.held(3000), false);
});

test("an answer that etcd holds no such lease is a lost lease, even before the deadline", () => {
  const d = renewedAt(1000);
  assert.equal(d.answered(1500, -1), "expired");
  assert.equal(d.validUntil, 3000, "the deadline does not move");
});

test("no answer: the lease is not held from the deadline on, however late the question", () => {
  const d = renewedAt(1000);
  // The question sent at 2400 has no answer yet: nothing moves.
  assert.equal(d.held(2999), true);
  assert.equal(d.held(3000), false);
  assert.equal(d.held(60_000), false);
});

/**
 * The coordinator against a real broker, with a hand-driven clock and no sweep timer: joins and
 * rebalances, generations, session expiry, rebalance timeouts, leaving, and what each refuses.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { GroupCoordinator, type JoinGroupRequest } from "../../src/broker/group-coordinator.js";
import { ErrorCode } from "../../src/format/errors.js";
import { conchError, FakeClock, openBroker } from "./helpers.js";

const SESSION = 1_000;

async function setup(t: TestContext, partitions = 6) {
  const broker = await openBroker(t);
  await broker.createTopic("orders", partitions);
  const clock = new FakeClock();
  const groups = new GroupCoordinator(broker, { now: clock.now, sweepIntervalMs: 0 });
  t.after(() => groups.close());
  const join = (over: Partial<JoinGroupRequest> = {}, signal?: AbortSignal) =>
    groups.join(
      {
        group: "g",
        memberId: "",
        clientId: "c",
        topics: ["orders"],
        strategy: "range",
        sessionTimeoutMs: SESSION,
        rebalanceTimeoutMs: 5_000,
        ...over,
      },
      signal,
    );
  return { broker, clock, groups, join };
}

/** Whether a promise has settled, after the microtasks queued so far. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test("the first member gets generation 1 and every partition at once", async (t) => {
  const { groups, join } = await setup(t);
  const a = await join({ clientId: "alpha" });
  assert.equal(a.generation, 1);
  assert.match(a.memberId, /^alpha-/);
  assert.equal(a.strategy, "range");
  assert.deepEqual(a.assignment, [{ topic: "orders", partitions: [0, 1, 2, 3, 4, 5] }]);
  assert.equal(groups.describeGroup("g").state, "Stable");
  groups.heartbeat("g", a.memberId, 1);
});

test("a second member waits until the first rejoins; then the partitions are split in a new generation", async (t) => {
  const { groups, join } = await setup(t);
  const a = await join();
  const bJoin = join();
  assert.equal(await settled(bJoin), false, "the join waits for the rebalance");
  assert.equal(groups.describeGroup("g").state, "PreparingRebalance");
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  // The member of the current generation may still commit what it owns during the rebalance.
  await groups.commit("g", a.memberId, 1, [{ topic: "orders", partition: 5, offset: 3 }]);
  const a2 = await join({ memberId: a.memberId });
  const b = await bJoin;
  assert.equal(a2.generation, 2);
  assert.equal(b.generation, 2);
  const owned = [...a2.assignment[0]!.partitions, ...b.assignment[0]!.partitions].sort();
  assert.deepEqual(owned, [0, 1, 2, 3, 4, 5], "each partition to exactly one member");
  assert.equal(a2.assignment[0]!.partitions.length, 3);
  // Generation 1 is over: no heartbeat, commit or fetch as the owner with it.
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.ILLEGAL_GENERATION));
  const mine = a2.assignment[0]!.partitions[0]!;
  await assert.rejects(
    groups.commit("g", a.memberId, 1, [{ topic: "orders", partition: mine, offset: 1 }]),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  assert.throws(
    () => groups.checkOwner("g", a.memberId, 1, "orders", mine),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  groups.checkOwner("g", a.memberId, 2, "orders", mine);
  // A partition of the other member is not ours in this generation either.
  const theirs = b.assignment[0]!.partitions[0]!;
  assert.throws(
    () => groups.checkOwner("g", a.memberId, 2, "orders", theirs),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  await assert.rejects(
    groups.commit("g", a.memberId, 2, [{ topic: "orders", partition: theirs, offset: 1 }]),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  await groups.commit("g", a.memberId, 2, [{ topic: "orders", partition: mine, offset: 7 }]);
  assert.deepEqual(
    groups.fetchOffsets("g", [
      { topic: "orders", partition: mine },
      { topic: "orders", partition: 5 },
      { topic: "orders", partition: theirs },
    ]),
    [
      { topic: "orders", partition: mine, offset: 7 },
      { topic: "orders", partition: 5, offset: 3 },
      { topic: "orders", partition: theirs, offset: -1 },
    ],
  );
});

test("a member that misses its heartbeats is dropped after the session timeout and its partitions move", async (t) => {
  const { clock, groups, join } = await setup(t);
  const a = await join();
  const bJoin = join();
  const a2 = await join({ memberId: a.memberId });
  const b = await bJoin;
  assert.equal(b.generation, 2);
  // b keeps heartbeating; a goes silent.
  clock.advance(SESSION / 2);
  groups.heartbeat("g", b.memberId, 2);
  groups.tick();
  clock.advance(SESSION / 2 + 1);
  groups.heartbeat("g", b.memberId, 2);
  groups.tick();
  assert.equal(groups.describeGroup("g").state, "PreparingRebalance", "a's session is over");
  assert.throws(() => groups.heartbeat("g", a2.memberId, 2), conchError(ErrorCode.UNKNOWN_MEMBER));
  assert.throws(() => groups.heartbeat("g", b.memberId, 2), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  const b3 = await join({ memberId: b.memberId });
  assert.equal(b3.generation, 3);
  assert.deepEqual(b3.assignment, [{ topic: "orders", partitions: [0, 1, 2, 3, 4, 5] }]);
  assert.equal(groups.describeGroup("g").members.length, 1);
});

test("a session is not expired early, and a member waiting in a join never expires", async (t) => {
  const { clock, groups, join } = await setup(t);
  const a = await join();
  clock.advance(SESSION);
  groups.tick();
  groups.heartbeat("g", a.memberId, 1);
  const bJoin = join();
  // a rejoins and waits for b? No: b's join is already waiting, so a's rejoin completes it.
  const a2 = await join({ memberId: a.memberId });
  await bJoin;
  // c joins and a rejoins; b stays silent. After three sessions only b has expired, and with it
  // gone the rebalance completes for a and c, who waited in their joins all along.
  const cJoin = join();
  const aJoin = join({ memberId: a2.memberId });
  clock.advance(SESSION * 3);
  assert.equal(await settled(cJoin), false);
  groups.tick();
  const [c, a3] = await Promise.all([cJoin, aJoin]);
  assert.equal(c.generation, 3);
  assert.equal(a3.generation, 3);
  assert.deepEqual(
    groups
      .describeGroup("g")
      .members.map((m) => m.memberId)
      .sort(),
    [a.memberId, c.memberId].sort(),
  );
});

test("members that do not rejoin within the rebalance timeout are dropped", async (t) => {
  const { clock, groups, join } = await setup(t);
  const a = await join({ sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 2_000 });
  const bJoin = join({ sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 2_000 });
  clock.advance(1_000);
  // a is alive (its heartbeats say so) but never rejoins.
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  groups.tick();
  assert.equal(await settled(bJoin), false);
  clock.advance(1_001);
  groups.tick();
  const b = await bJoin;
  assert.equal(b.generation, 2);
  assert.deepEqual(b.assignment, [{ topic: "orders", partitions: [0, 1, 2, 3, 4, 5] }]);
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.UNKNOWN_MEMBER));
});

test("leaving rebalances at once; the last member leaving empties the group", async (t) => {
  const { groups, join } = await setup(t);
  const a = await join();
  const bJoin = join();
  await join({ memberId: a.memberId });
  const b = await bJoin;
  groups.leave("g", a.memberId);
  assert.throws(() => groups.leave("g", a.memberId), conchError(ErrorCode.UNKNOWN_MEMBER));
  const b3 = await join({ memberId: b.memberId });
  assert.equal(b3.generation, 3);
  assert.equal(b3.assignment[0]!.partitions.length, 6);
  groups.leave("g", b.memberId);
  const d = groups.describeGroup("g");
  assert.equal(d.state, "Empty");
  assert.equal(d.generation, 4);
  assert.deepEqual(d.members, []);
  assert.deepEqual(groups.listGroups(), [
    { group: "g", kind: "native", state: "Empty", members: 0, protocolType: "" },
  ]);
});

test("a join whose connection closes forgets a new member; an old member stays for its session", async (t) => {
  const { clock, groups, join } = await setup(t);
  const a = await join();
  const gone = new AbortController();
  const bJoin = join({}, gone.signal);
  assert.equal(groups.describeGroup("g").members.length, 2);
  gone.abort();
  await assert.rejects(bJoin, conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  assert.equal(groups.describeGroup("g").members.length, 1);
  // a rejoins (it was told to) and, alone, completes the rebalance.
  const aLeft = new AbortController();
  const a2 = await join({ memberId: a.memberId }, aLeft.signal);
  assert.equal(a2.generation, 2);
  const bJoin2 = join();
  const a3 = await join({ memberId: a.memberId });
  const b = await bJoin2;
  assert.equal(a3.generation, 3);
  // An old member whose rejoin is abandoned is kept until its session runs out.
  const cJoin = join();
  const aRejoin = join({ memberId: a.memberId }, aLeft.signal);
  aLeft.abort();
  await assert.rejects(aRejoin, conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  assert.equal(groups.describeGroup("g").members.length, 3);
  const bRejoin = join({ memberId: b.memberId });
  assert.equal(await settled(bRejoin), false, "still waiting for a");
  clock.advance(SESSION + 1);
  groups.tick();
  const c = await cJoin;
  assert.equal(c.generation, 4);
  assert.equal((await bRejoin).generation, 4);
  assert.equal(groups.describeGroup("g").members.length, 2);
});

test("an unchanged rejoin of a stable member returns its assignment without a rebalance", async (t) => {
  const { groups, join } = await setup(t);
  const a = await join();
  const again = await join({ memberId: a.memberId });
  assert.deepEqual(again, a);
  assert.equal(groups.describeGroup("g").generation, 1);
  // A changed subscription does rebalance.
  const changed = await join({ memberId: a.memberId, strategy: "roundrobin" });
  assert.equal(changed.generation, 2);
  assert.equal(changed.strategy, "roundrobin");
});

test("the group's strategy is the one most members ask for; a tie goes to the oldest member", async (t) => {
  const { join } = await setup(t);
  const a = await join({ strategy: "roundrobin" });
  const bJoin = join({ strategy: "range" });
  const a2 = await join({ memberId: a.memberId, strategy: "roundrobin" });
  assert.equal(a2.strategy, "roundrobin", "1 vote each: the oldest member's choice");
  assert.equal((await bJoin).strategy, "roundrobin");
  const cJoin = join({ strategy: "range" });
  const aJoin = join({ memberId: a.memberId, strategy: "roundrobin" });
  const b3 = await join({ memberId: (await bJoin).memberId, strategy: "range" });
  assert.equal(b3.strategy, "range", "2 votes to 1");
  assert.equal((await cJoin).strategy, "range");
  assert.equal((await aJoin).strategy, "range");
});

test("joins are validated", async (t) => {
  const { join } = await setup(t);
  await assert.rejects(join({ group: "" }), conchError(ErrorCode.INVALID_GROUP));
  await assert.rejects(join({ group: "x".repeat(256) }), conchError(ErrorCode.INVALID_GROUP));
  await assert.rejects(join({ topics: [] }), conchError(ErrorCode.INVALID_REQUEST));
  await assert.rejects(join({ topics: ["../etc"] }), conchError(ErrorCode.INVALID_TOPIC_NAME));
  await assert.rejects(join({ strategy: "sticky" }), conchError(ErrorCode.INVALID_REQUEST));
  await assert.rejects(join({ sessionTimeoutMs: 10 }), conchError(ErrorCode.INVALID_REQUEST));
  await assert.rejects(join({ rebalanceTimeoutMs: 2 ** 31 }), conchError(ErrorCode.INVALID_REQUEST));
  await assert.rejects(join({ memberId: "ghost" }), conchError(ErrorCode.UNKNOWN_MEMBER));
});

test("commits on behalf of no member only while the group has none; unknown partitions are refused", async (t) => {
  const { groups, join } = await setup(t);
  await groups.commit("solo", "", 0, [{ topic: "orders", partition: 0, offset: 10 }]);
  assert.deepEqual(groups.fetchOffsets("solo", []), [{ topic: "orders", partition: 0, offset: 10 }]);
  await assert.rejects(
    groups.commit("solo", "", 0, [{ topic: "orders", partition: 6, offset: 1 }]),
    conchError(ErrorCode.UNKNOWN_PARTITION),
  );
  await assert.rejects(
    groups.commit("solo", "", 0, [{ topic: "nope", partition: 0, offset: 1 }]),
    conchError(ErrorCode.UNKNOWN_TOPIC),
  );
  await assert.rejects(
    groups.commit("solo", "m", 1, [{ topic: "orders", partition: 0, offset: 1 }]),
    conchError(ErrorCode.UNKNOWN_MEMBER),
  );
  const a = await join();
  await assert.rejects(
    groups.commit("g", "", 0, [{ topic: "orders", partition: 0, offset: 1 }]),
    conchError(ErrorCode.GROUP_NOT_EMPTY),
  );
  await assert.rejects(
    groups.commit("g", a.memberId, 1, [{ topic: "orders", partition: 0, offset: -1 }]),
    conchError(ErrorCode.INVALID_REQUEST),
  );
});

test("reset-offsets and delete are refused while the group has members, and work without", async (t) => {
  const { broker, groups, join } = await setup(t, 2);
  for (let i = 0; i < 5; i++) {
    await broker.produce("orders", 0, (await import("./helpers.js")).batchOf([`m${i}`]), "leader");
  }
  const a = await join();
  await assert.rejects(
    groups.resetOffsets("g", "orders", { to: "earliest" }),
    conchError(ErrorCode.GROUP_NOT_EMPTY),
  );
  await assert.rejects(groups.deleteGroup("g"), conchError(ErrorCode.GROUP_NOT_EMPTY));
  groups.leave("g", a.memberId);
  assert.deepEqual(await groups.resetOffsets("g", "orders", { to: "latest" }), [
    { topic: "orders", partition: 0, offset: 5 },
    { topic: "orders", partition: 1, offset: 0 },
  ]);
  assert.deepEqual(await groups.resetOffsets("g", "orders", { to: "offset", offset: 3 }), [
    { topic: "orders", partition: 0, offset: 3 },
    { topic: "orders", partition: 1, offset: 0 },
  ]);
  const d = groups.describeGroup("g");
  assert.deepEqual(
    d.partitions.map((p) => [p.partition, p.committed, p.highWatermark, p.lag]),
    [
      [0, 3, 5, 2],
      [1, 0, 0, 0],
    ],
  );
  await groups.deleteGroup("g");
  assert.throws(() => groups.describeGroup("g"), conchError(ErrorCode.UNKNOWN_GROUP));
  assert.deepEqual(groups.listGroups(), []);
  await assert.rejects(groups.deleteGroup("g"), conchError(ErrorCode.UNKNOWN_GROUP));
});

test("a topic gaining partitions rebalances the group at the next heartbeat", async (t) => {
  const { broker, groups, join } = await setup(t, 2);
  const a = await join();
  assert.deepEqual(a.assignment, [{ topic: "orders", partitions: [0, 1] }]);
  await broker.addPartitions("orders", 3);
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  const a2 = await join({ memberId: a.memberId });
  assert.deepEqual(a2.assignment, [{ topic: "orders", partitions: [0, 1, 2] }]);
});

test("describe shows members, owners, committed offsets and lag; close answers waiting joins", async (t) => {
  const { groups, join } = await setup(t, 2);
  const a = await join({ clientId: "alpha" });
  await groups.commit("g", a.memberId, 1, [{ topic: "orders", partition: 1, offset: 0 }]);
  const d = groups.describeGroup("g");
  assert.equal(d.state, "Stable");
  assert.equal(d.generation, 1);
  assert.equal(d.strategy, "range");
  assert.deepEqual(d.members, [
    {
      memberId: a.memberId,
      clientId: "alpha",
      assignment: [{ topic: "orders", partitions: [0, 1] }],
      metadata: new Uint8Array(0),
      assignmentBytes: new Uint8Array(0),
    },
  ]);
  assert.deepEqual(d.partitions, [
    { topic: "orders", partition: 0, owner: a.memberId, committed: -1, highWatermark: 0, lag: -1 },
    { topic: "orders", partition: 1, owner: a.memberId, committed: 0, highWatermark: 0, lag: 0 },
  ]);
  const waiting = join();
  groups.close();
  await assert.rejects(waiting, conchError(ErrorCode.SHUTTING_DOWN));
  assert.throws(() => groups.listGroups(), conchError(ErrorCode.SHUTTING_DOWN));
});

test("an empty group is forgotten at the next sweep unless it holds committed offsets", async (t) => {
  const { groups, join } = await setup(t);
  const a = await join();
  const b = await join({ group: "kept" });
  await groups.commit("kept", b.memberId, 1, [{ topic: "orders", partition: 0, offset: 1 }]);
  groups.leave("g", a.memberId);
  groups.leave("kept", b.memberId);
  groups.tick();
  assert.deepEqual(groups.listGroups(), [
    { group: "kept", kind: "native", state: "Empty", members: 0, protocolType: "" },
  ]);
  assert.throws(() => groups.describeGroup("g"), conchError(ErrorCode.UNKNOWN_GROUP));
  assert.throws(() => groups.heartbeat("g", a.memberId, 1), conchError(ErrorCode.UNKNOWN_MEMBER));
  // A new member starts the group again from the first generation.
  assert.equal((await join()).generation, 1);
});

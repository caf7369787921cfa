/**
 * Kafka groups in the coordinator, with a hand-driven clock and no sweep timer: the leader learns
 * every member's metadata, SyncGroup hands each member its own assignment, new members are asked
 * to rejoin with an id (JoinGroup v4+), rebalances, leaving, session expiry; one kind per group;
 * offsets shared between kinds.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import {
  GroupCoordinator,
  type KafkaJoinRequest,
  type KafkaJoinResult,
} from "../../src/broker/group-coordinator.js";
import { ErrorCode } from "../../src/format/errors.js";
import { conchError, FakeClock, openBroker } from "./helpers.js";

const SESSION = 1_000;
const meta = (s: string) => Buffer.from(s);

async function setup(t: TestContext) {
  const broker = await openBroker(t);
  await broker.createTopic("orders", 4);
  const clock = new FakeClock();
  const groups = new GroupCoordinator(broker, { now: clock.now, sweepIntervalMs: 0 });
  t.after(() => groups.close());
  const join = (over: Partial<KafkaJoinRequest> = {}, signal?: AbortSignal) =>
    groups.kafkaJoin(
      {
        group: "k",
        memberId: "",
        clientId: "rdkafka",
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: meta("m") }],
        sessionTimeoutMs: SESSION,
        rebalanceTimeoutMs: 5_000,
        requireKnownMemberId: false,
        ...over,
      },
      signal,
    );
  return { broker, clock, groups, join };
}

function joined(r: KafkaJoinResult) {
  assert.equal(r.kind, "joined");
  if (r.kind !== "joined") throw new Error("unreachable");
  return r;
}

async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test("two Kafka members: the leader gets both members' metadata, the sync delivers each its own assignment", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join({ protocols: [{ name: "range", metadata: meta("a-meta") }] }));
  assert.equal(a.generation, 1);
  assert.equal(a.leader, a.memberId);
  assert.deepEqual(a.members, [{ memberId: a.memberId, metadata: meta("a-meta") }]);
  assert.deepEqual(
    await groups.kafkaSync({
      group: "k",
      memberId: a.memberId,
      generation: 1,
      assignments: [{ memberId: a.memberId, assignment: meta("all") }],
    }),
    meta("all"),
  );

  const bJoin = join({ protocols: [{ name: "range", metadata: meta("b-meta") }] });
  assert.equal(await settled(bJoin), false, "b waits for a to rejoin");
  assert.throws(() => groups.kafkaHeartbeat("k", a.memberId, 1), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  const a2 = joined(
    await join({ memberId: a.memberId, protocols: [{ name: "range", metadata: meta("a-meta") }] }),
  );
  const b = joined(await bJoin);
  assert.equal(a2.generation, 2);
  assert.equal(b.generation, 2);
  assert.equal(b.leader, a.memberId, "the leader stays the leader");
  assert.deepEqual(b.members, [], "only the leader learns the metadata");
  assert.deepEqual(
    new Map(a2.members.map((m) => [m.memberId, Buffer.from(m.metadata).toString()])),
    new Map([
      [a.memberId, "a-meta"],
      [b.memberId, "b-meta"],
    ]),
  );
  assert.equal(groups.describeGroup("k").state, "CompletingRebalance");

  // The follower's sync waits for the leader's.
  const bSync = groups.kafkaSync({ group: "k", memberId: b.memberId, generation: 2, assignments: [] });
  assert.equal(await settled(bSync), false);
  const aSync = await groups.kafkaSync({
    group: "k",
    memberId: a.memberId,
    generation: 2,
    assignments: [
      { memberId: a.memberId, assignment: meta("for-a") },
      { memberId: b.memberId, assignment: meta("for-b") },
    ],
  });
  assert.equal(Buffer.from(aSync).toString(), "for-a");
  assert.equal(Buffer.from(await bSync).toString(), "for-b");
  assert.equal(groups.describeGroup("k").state, "Stable");
  groups.kafkaHeartbeat("k", b.memberId, 2);
  assert.throws(() => groups.kafkaHeartbeat("k", b.memberId, 1), conchError(ErrorCode.ILLEGAL_GENERATION));
});

test("a third member starts a rebalance; members that leave or go silent are dropped", async (t) => {
  const { clock, groups, join } = await setup(t);
  const a = joined(await join());
  await groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 1, assignments: [] });
  const bJoin = join();
  joined(await join({ memberId: a.memberId }));
  const b = joined(await bJoin);
  await Promise.all([
    groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 2, assignments: [] }),
    groups.kafkaSync({ group: "k", memberId: b.memberId, generation: 2, assignments: [] }),
  ]);
  const cJoin = join({ clientId: "third" });
  assert.throws(() => groups.kafkaHeartbeat("k", b.memberId, 2), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  // b leaves instead of rejoining; a rejoins: generation 3 has a and c.
  groups.kafkaLeave("k", b.memberId);
  const a3 = joined(await join({ memberId: a.memberId }));
  const c = joined(await cJoin);
  assert.equal(a3.generation, 3);
  assert.equal(a3.members.length, 2);
  assert.throws(() => groups.kafkaHeartbeat("k", b.memberId, 3), conchError(ErrorCode.UNKNOWN_MEMBER));
  await Promise.all([
    groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 3, assignments: [] }),
    groups.kafkaSync({ group: "k", memberId: c.memberId, generation: 3, assignments: [] }),
  ]);

  // c keeps heartbeating, a goes silent: after a session a is dropped and c must rejoin.
  clock.advance(SESSION / 2);
  groups.kafkaHeartbeat("k", c.memberId, 3);
  clock.advance(SESSION / 2 + 1);
  groups.tick();
  assert.throws(() => groups.kafkaHeartbeat("k", c.memberId, 3), conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  const c4 = joined(await join({ memberId: c.memberId }));
  assert.equal(c4.generation, 4);
  assert.equal(c4.leader, c.memberId, "a new leader when the old one is gone");
  assert.deepEqual(
    c4.members.map((m) => m.memberId),
    [c.memberId],
  );
});

test("JoinGroup v4+: a new member is given an id and joins with it; an id never used lapses", async (t) => {
  const { clock, groups, join } = await setup(t);
  const first = await join({ requireKnownMemberId: true, clientId: "kafkajs" });
  assert.equal(first.kind, "memberIdRequired");
  if (first.kind !== "memberIdRequired") return;
  assert.match(first.memberId, /^kafkajs-/);
  assert.equal(groups.describeGroup("k").members.length, 0, "not a member until it joins with its id");
  const a = joined(await join({ memberId: first.memberId, requireKnownMemberId: true }));
  assert.equal(a.memberId, first.memberId);
  assert.equal(a.generation, 1);

  const stale = await join({ requireKnownMemberId: true });
  assert.equal(stale.kind, "memberIdRequired");
  clock.advance(SESSION + 1);
  groups.kafkaHeartbeat("k", a.memberId, 1);
  groups.tick();
  if (stale.kind === "memberIdRequired") {
    await assert.rejects(join({ memberId: stale.memberId }), conchError(ErrorCode.UNKNOWN_MEMBER));
  }
});

test("a sync waiting for the leader is told REBALANCE_IN_PROGRESS when a member joins meanwhile", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join());
  await groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 1, assignments: [] });
  const bJoin = join();
  joined(await join({ memberId: a.memberId }));
  const b = joined(await bJoin);
  const bSync = groups.kafkaSync({ group: "k", memberId: b.memberId, generation: 2, assignments: [] });
  const cJoin = join();
  await assert.rejects(bSync, conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  groups.kafkaLeave("k", a.memberId);
  groups.kafkaLeave("k", b.memberId);
  assert.equal(joined(await cJoin).generation, 3);
});

test("a group is one kind: a native member cannot join a Kafka group, nor the reverse", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join());
  await assert.rejects(
    groups.join({
      group: "k",
      memberId: "",
      clientId: "conch",
      topics: ["orders"],
      strategy: "range",
      sessionTimeoutMs: SESSION,
      rebalanceTimeoutMs: SESSION,
    }),
    conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
  );
  assert.throws(
    () => groups.heartbeat("k", a.memberId, 1),
    conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
  );
  const native = await groups.join({
    group: "n",
    memberId: "",
    clientId: "conch",
    topics: ["orders"],
    strategy: "range",
    sessionTimeoutMs: SESSION,
    rebalanceTimeoutMs: SESSION,
  });
  await assert.rejects(join({ group: "n" }), conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
  assert.throws(
    () => groups.kafkaHeartbeat("n", native.memberId, 1),
    conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
  );
  // Kafka members that share no protocol, or differ in protocol type, are refused too.
  await assert.rejects(
    join({ protocols: [{ name: "roundrobin", metadata: meta("") }] }),
    conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
  );
  await assert.rejects(join({ protocolType: "connect" }), conchError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
  await assert.rejects(join({ sessionTimeoutMs: 10 }), conchError(ErrorCode.INVALID_SESSION_TIMEOUT));
  // Once the Kafka group is empty, the name is free for either kind.
  groups.kafkaLeave("k", a.memberId);
  const n2 = await groups.join({
    group: "k",
    memberId: "",
    clientId: "conch",
    topics: ["orders"],
    strategy: "range",
    sessionTimeoutMs: SESSION,
    rebalanceTimeoutMs: SESSION,
  });
  assert.equal(n2.generation, 1);
  assert.equal(groups.listGroups().find((g) => g.group === "k")?.kind, "native");
});

test("offsets are one store for both kinds: Kafka commits (member or standalone) read back natively and vice versa", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join());
  await assert.rejects(
    groups.commit("k", a.memberId, 1, [{ topic: "orders", partition: 0, offset: 5 }]),
    conchError(ErrorCode.REBALANCE_IN_PROGRESS),
    "no commits while the leader's assignment is awaited",
  );
  await groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 1, assignments: [] });
  await groups.commit("k", a.memberId, 1, [{ topic: "orders", partition: 0, offset: 5 }]);
  await assert.rejects(
    groups.commit("k", a.memberId, 0, [{ topic: "orders", partition: 0, offset: 6 }]),
    conchError(ErrorCode.ILLEGAL_GENERATION),
  );
  await assert.rejects(
    groups.commit("k", "", 0, [{ topic: "orders", partition: 0, offset: 6 }]),
    conchError(ErrorCode.GROUP_NOT_EMPTY),
  );
  assert.deepEqual(groups.fetchOffsets("k", []), [{ topic: "orders", partition: 0, offset: 5 }]);
  groups.kafkaLeave("k", a.memberId);
  // A standalone commit (no member) to the empty group, then a native member reads it.
  await groups.commit("k", "", 0, [{ topic: "orders", partition: 1, offset: 9 }]);
  const d = groups.describeGroup("k");
  assert.deepEqual(
    d.partitions.filter((p) => p.committed >= 0).map((p) => [p.partition, p.committed]),
    [
      [0, 5],
      [1, 9],
    ],
  );
});

test("describe decodes the standard consumer assignment per member", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join());
  // version 1 | [ "orders" : [2, 0] ] | user_data null
  const assignment = Buffer.from(
    "0001" + "00000001" + "00066f7264657273" + "00000002" + "00000002" + "00000000" + "ffffffff",
    "hex",
  );
  await groups.kafkaSync({
    group: "k",
    memberId: a.memberId,
    generation: 1,
    assignments: [{ memberId: a.memberId, assignment }],
  });
  const d = groups.describeGroup("k");
  assert.equal(d.kind, "kafka");
  assert.equal(d.protocolType, "consumer");
  assert.equal(d.strategy, "range");
  assert.deepEqual(d.members[0]?.assignment, [{ topic: "orders", partitions: [0, 2] }]);
  assert.deepEqual(Buffer.from(d.members[0]!.assignmentBytes), assignment);
  assert.deepEqual(
    d.partitions.map((p) => p.owner === a.memberId),
    [true, false, true, false],
  );
});

test("a Kafka join waiting in a rebalance ends when its connection closes; a new member is forgotten", async (t) => {
  const { groups, join } = await setup(t);
  const a = joined(await join());
  await groups.kafkaSync({ group: "k", memberId: a.memberId, generation: 1, assignments: [] });
  const ac = new AbortController();
  const bJoin = join({}, ac.signal);
  ac.abort();
  await assert.rejects(bJoin, conchError(ErrorCode.REBALANCE_IN_PROGRESS));
  const a2 = joined(await join({ memberId: a.memberId }));
  assert.equal(a2.members.length, 1);
});

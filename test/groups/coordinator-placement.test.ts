/**
 * Cluster mode's coordinator placement, against a real broker's logs: a group's offsets partition
 * is Kafka's hash of its name; a coordinator serves only the groups of the offsets partitions it
 * leads, once their commits are replayed; losing a partition drops its groups (a waiting join is
 * told NOT_COORDINATOR) and gaining it again brings their commits back from the log.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GroupCoordinator } from "../../src/broker/group-coordinator.js";
import { groupPartition, javaStringHash } from "../../src/broker/group-partition.js";
import { OFFSETS_TOPIC, OFFSETS_TOPIC_CONFIGS } from "../../src/broker/offset-store.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { conchError, FakeClock, openBroker } from "./helpers.js";

/** Java's String.hashCode computed another way: the sum of s[i] * 31^(n-1-i) modulo 2^32, signed. */
function javaHashByBigInt(s: string): number {
  let h = 0n;
  for (let i = 0; i < s.length; i++) h = (h * 31n + BigInt(s.charCodeAt(i))) % 2n ** 32n;
  return Number(BigInt.asIntN(32, h));
}

test("a group's offsets partition is Kafka's: abs(String.hashCode) mod the partition count", () => {
  assert.equal(javaStringHash(""), 0);
  assert.equal(javaStringHash("hello"), 99162322);
  assert.equal(javaStringHash("Aa"), javaStringHash("BB"));
  // Its hash is Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
  assert.equal(javaStringHash("polygenelubricants"), -0x80000000);
  assert.equal(groupPartition("polygenelubricants", 16), 0);
  assert.equal(groupPartition("hello", 16), 99162322 % 16);
  for (const g of [
    "billing",
    "cg-billing",
    "a group with spaces",
    "ünïcödé-gröup",
    "😀-emoji",
    "x".repeat(255),
  ]) {
    const h = javaHashByBigInt(g);
    assert.equal(javaStringHash(g), h, g);
    assert.equal(groupPartition(g, 16), Math.abs(h) % 16, g);
  }
});

test("a coordinator serves the groups of the offsets partitions it leads, drops them when it loses one, and reloads them", async (t) => {
  const broker = await openBroker(t);
  await broker.createTopic("orders", 2);
  await broker.ensureInternalTopic(OFFSETS_TOPIC, 4, { ...OFFSETS_TOPIC_CONFIGS });
  const groups = new GroupCoordinator(broker, { now: new FakeClock().now, sweepIntervalMs: 0 });
  t.after(() => groups.close());
  const placed: string[] = [];
  groups.coordinateLedPartitions({
    coordinator: async (group) => {
      placed.push(group);
      return { id: 2, host: "h", port: 1, kafkaHost: "kh", kafkaPort: 2 };
    },
  });
  // Two groups on different partitions of four.
  const g1 = "billing";
  const g2 = ["audit", "ledger", "search", "stats"].find(
    (g) => groupPartition(g, 4) !== groupPartition(g1, 4),
  )!;
  const p1 = groupPartition(g1, 4);
  const p2 = groupPartition(g2, 4);
  const notCoordinator = conchError(ErrorCode.NOT_COORDINATOR);

  // Nothing led yet: every group is another broker's, and FindCoordinator asks the placement.
  assert.throws(() => groups.fetchOffsets(g1, []), notCoordinator);
  await assert.rejects(
    groups.commit(g1, "", 0, [{ topic: "orders", partition: 0, offset: 1 }]),
    notCoordinator,
  );
  assert.equal((await groups.findCoordinator(g1))?.id, 2);
  assert.deepEqual(placed, [g1]);

  await groups.offsetsLeaderGained(p1, 4);
  await groups.commit(g1, "", 0, [{ topic: "orders", partition: 0, offset: 7 }]);
  assert.deepEqual(groups.fetchOffsets(g1, []), [{ topic: "orders", partition: 0, offset: 7 }]);
  assert.throws(() => groups.describeGroup(g2), notCoordinator);
  // The commit went to the group's own partition.
  assert.equal(broker.partition(OFFSETS_TOPIC, p1).logEndOffset, 1);
  assert.equal(broker.partition(OFFSETS_TOPIC, p2).logEndOffset, 0);

  // A member waits in a join (a second one is expected); the partition is lost: it is told to look again.
  await groups.offsetsLeaderGained(p2, 4);
  const kafkaJoin = () =>
    groups.kafkaJoin({
      group: g2,
      memberId: "",
      clientId: "c",
      protocolType: "consumer",
      protocols: [{ name: "range", metadata: new Uint8Array(0) }],
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      requireKnownMemberId: false,
    });
  const first = await kafkaJoin();
  assert.equal(first.kind, "joined");
  // The second member waits for the first to rejoin.
  const join = kafkaJoin();
  assert.deepEqual(
    groups.listGroups().map((g) => g.group),
    [g1, g2].sort(),
  );
  groups.offsetsLeaderLost(p2);
  groups.offsetsLeaderLost(p1);
  await join.then(
    (r) => assert.fail(`the join completed: ${JSON.stringify(r)}`),
    (err: unknown) => assert.ok(notCoordinator(err), String(err)),
  );
  assert.deepEqual(groups.listGroups(), []);
  assert.throws(() => groups.kafkaHeartbeat(g2, first.memberId, 1), notCoordinator);
  assert.throws(() => groups.fetchOffsets(g1, []), notCoordinator);

  // Led again (a later epoch): the commits come back from the log.
  await groups.offsetsLeaderGained(p1, 4);
  assert.deepEqual(groups.fetchOffsets(g1, []), [{ topic: "orders", partition: 0, offset: 7 }]);
  groups.offsetsLeadershipFenced();
  assert.throws(
    () => groups.fetchOffsets(g1, []),
    (err: unknown) => err instanceof ConchError && err.retriable,
  );
});

/**
 * The group consumer against a real broker and server: sharing partitions, committing, resuming
 * after a restart of the group or of the broker, reset policies and retention.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { ConnectionManager } from "../../src/client/connection-manager.js";
import type { ConsumerMessage } from "../../src/client/consumer.js";
import { GroupAdmin } from "../../src/client/group-admin.js";
import {
  GroupConsumer,
  type GroupConsumerOptions,
  type OffsetResetEvent,
} from "../../src/client/group-consumer.js";
import { connectionManagerOptions } from "../../src/client/options.js";
import { ErrorCode } from "../../src/format/errors.js";
import { batchOf, conchError, described, fill, type Served, serve, until } from "./helpers.js";

function member(served: Served, options: Partial<GroupConsumerOptions> = {}): GroupConsumer {
  return served.track(
    new GroupConsumer(
      { brokers: [served.address], clientId: "test" },
      { group: "g", topics: ["orders"], sessionTimeoutMs: 1500, maxWaitMs: 100, ...options },
    ),
  );
}

function admin(t: TestContext, address: string): GroupAdmin {
  const manager = new ConnectionManager(connectionManagerOptions({ brokers: [address] }));
  t.after(() => manager.close());
  return new GroupAdmin(manager);
}

/** Reads `n` messages (bounded wait), leaving the iterator open. */
async function take(iterator: AsyncIterator<ConsumerMessage>, n: number): Promise<ConsumerMessage[]> {
  const out: ConsumerMessage[] = [];
  const deadline = performance.now() + 10_000;
  while (out.length < n) {
    if (performance.now() > deadline) throw new Error(`read ${out.length} of ${n} messages`);
    const r = await iterator.next();
    if (r.done) throw new Error(`the iterator ended after ${out.length} of ${n} messages`);
    out.push(r.value);
  }
  return out;
}

const value = (m: ConsumerMessage): string => m.value.toString();

test("three members over six partitions: each partition read by exactly one, everything read once", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 6);
  const all = await fill(broker, "orders", 6, 20);
  const members = [member(served), member(served), member(served)];
  await until(() => {
    const d = described(broker, "g");
    return (
      d?.state === "Stable" && d.members.length === 3 && members.every((c) => c.generation === d.generation)
    );
  }, "a stable group of three");
  const d = broker.groups.describeGroup("g");
  const owners = new Map<number, string>();
  for (const c of members) {
    const mine = c.assignment().map((p) => p.partition);
    assert.equal(mine.length, 2);
    assert.deepEqual(
      mine.sort(),
      d.members.find((m) => m.memberId === c.memberId)!.assignment[0]!.partitions,
      "the consumer reads what the broker assigned it",
    );
    for (const p of mine) {
      assert.equal(owners.has(p), false, `partition ${p} owned twice`);
      owners.set(p, c.memberId);
    }
  }
  assert.equal(owners.size, 6);
  // Nobody moves any more, so each member reads exactly its own partitions, and all of them.
  const seen: string[] = [];
  await Promise.all(
    members.map(async (c) => {
      for (const m of await take(c.messages(), 40)) {
        assert.equal(owners.get(m.partition), c.memberId);
        seen.push(value(m));
      }
    }),
  );
  assert.deepEqual(seen.sort(), [...all].sort());
});

test("a restarted group resumes after its committed offsets", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 3);
  const all = await fill(broker, "orders", 3, 10);
  const first = member(served, { autoCommit: false });
  const it = first.messages();
  const read = await take(it, 12);
  await first.commit(read.at(-1));
  await first.close();
  const committed = broker.groups.fetchOffsets("g", []);
  assert.equal(
    committed.reduce((n, o) => n + o.offset, 0),
    12,
    "the commit covers exactly the 12 messages processed",
  );

  const second = member(served);
  const rest = await take(second.messages(), 18);
  const again = [...read, ...rest].map(value).sort();
  assert.deepEqual(again, [...all].sort(), "the rest, nothing twice, nothing skipped");
});

test("without commit(message) the message in hand when the loop exits is read again", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 1);
  await fill(broker, "orders", 1, 5);
  const first = member(served);
  for await (const m of first) if (m.offset === 2) break;
  await first.close(); // autoCommit: commits what was processed, 0 and 1
  assert.deepEqual(broker.groups.fetchOffsets("g", []), [{ topic: "orders", partition: 0, offset: 2 }]);
  const second = member(served);
  assert.deepEqual(
    (await take(second.messages(), 3)).map((m) => m.offset),
    [2, 3, 4],
  );
});

test("committed offsets survive a broker restart", async (t) => {
  const served = await serve(t);
  await served.broker.createTopic("orders", 2);
  const all = await fill(served.broker, "orders", 2, 10);
  const first = member(served, { autoCommitIntervalMs: 50 });
  const read = await take(first.messages(), 7);
  await first.commit(read.at(-1));
  await first.close();
  await served.stop();

  const again = await serve(t, served.dataDir);
  const second = member(again);
  const rest = await take(second.messages(), 13);
  assert.deepEqual([...read, ...rest].map(value).sort(), [...all].sort());
});

test("autoCommit commits what was processed, and close() commits and leaves", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 2);
  await fill(broker, "orders", 2, 5);
  const c = member(served, { autoCommitIntervalMs: 20 });
  const it = c.messages();
  await take(it, 10);
  // The tenth message is in hand until the iterator is asked for the next one.
  await until(
    () => broker.groups.fetchOffsets("g", []).reduce((n, o) => n + o.offset, 0) === 9,
    "an automatic commit of nine messages",
  );
  const waiting = it.next();
  await until(
    () => broker.groups.fetchOffsets("g", []).reduce((n, o) => n + o.offset, 0) === 10,
    "an automatic commit of all ten",
  );
  await c.close();
  assert.equal((await waiting).done, true, "closing ends the iterator");
  assert.deepEqual(broker.groups.fetchOffsets("g", []), [
    { topic: "orders", partition: 0, offset: 5 },
    { topic: "orders", partition: 1, offset: 5 },
  ]);
  const d = broker.groups.describeGroup("g");
  assert.equal(d.state, "Empty", "close() left the group");
  assert.deepEqual(
    d.partitions.map((p) => p.lag),
    [0, 0],
  );
});

test("resetPolicy decides where a partition without a commit starts", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 1);
  await fill(broker, "orders", 1, 5);
  const latest = member(served, { group: "new-only", resetPolicy: "latest" });
  const earliest = member(served, { group: "everything" });
  await Promise.all([latest.ready(), earliest.ready()]);
  // Both partitions were placed when assigned: "latest" at the end as it was then.
  await broker.produce("orders", 0, batchOf(["late"]), "leader");
  assert.deepEqual((await take(latest.messages(), 1)).map(value), ["late"]);
  assert.deepEqual((await take(earliest.messages(), 6)).map(value), [
    "p0-0",
    "p0-1",
    "p0-2",
    "p0-3",
    "p0-4",
    "late",
  ]);
});

test("a committed offset that retention deleted starts at the earliest offset still stored", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 1, { "segment.bytes": "1024", "retention.bytes": "1024" });
  for (let i = 0; i < 40; i++)
    await broker.produce("orders", 0, batchOf([`m${i}-${"x".repeat(60)}`]), "leader");
  await broker.partition("orders", 0).enforceRetention();
  const logStart = broker.partition("orders", 0).logStartOffset;
  assert.ok(logStart > 0, "retention deleted the oldest segments");
  await admin(t, served.address).commitOffsets("g", [{ topic: "orders", partition: 0, offset: 1 }]);
  const c = member(served);
  const resets: OffsetResetEvent[] = [];
  c.on("offsetReset", (e: OffsetResetEvent) => resets.push(e));
  const [m] = await take(c.messages(), 1);
  assert.equal(m!.offset, logStart);
  assert.deepEqual(resets, [{ topic: "orders", partition: 0, committed: 1, offset: logStart }]);
});

test("a member joining a busy group takes over partitions and nothing is lost", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 4);
  const all = await fill(broker, "orders", 4, 50);
  const seen = new Map<string, number>();
  const read = async (c: GroupConsumer): Promise<void> => {
    for await (const m of c) {
      seen.set(value(m), (seen.get(value(m)) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const a = member(served, { autoCommitIntervalMs: 50 });
  const loops = [read(a)];
  await until(() => seen.size >= 20, "the first member to get going");
  const b = member(served, { autoCommitIntervalMs: 50 });
  loops.push(read(b));
  await until(() => {
    const d = described(broker, "g");
    return (
      d?.state === "Stable" &&
      d.members.length === 2 &&
      a.generation === d.generation &&
      b.generation === d.generation
    );
  }, "both members in one generation");
  assert.equal(a.assignment().length, 2);
  assert.equal(b.assignment().length, 2);
  await until(() => [...all].every((v) => seen.has(v)), "every message");
  await a.close();
  await b.close();
  await Promise.all(loops);
  assert.deepEqual([...seen.keys()].sort(), [...all].sort());
});

test("an error no retry can cure ends the consumer: ready() and the iterator reject with it", async (t) => {
  const served = await serve(t);
  await served.broker.createTopic("orders", 1);
  const c = member(served, { group: "x".repeat(300) });
  await assert.rejects(c.ready(), conchError(ErrorCode.INVALID_GROUP));
  await assert.rejects(c.messages().next(), conchError(ErrorCode.INVALID_GROUP));
  assert.throws(
    () =>
      new GroupConsumer(
        { brokers: [served.address] },
        { group: "g", topics: ["orders"], strategy: "sticky" as "range" },
      ),
    conchError(ErrorCode.INVALID_REQUEST),
  );
});

test("group administration: list, describe, reset (refused with members) and delete", async (t) => {
  const served = await serve(t);
  const { broker } = served;
  await broker.createTopic("orders", 2);
  await fill(broker, "orders", 2, 4);
  const groups = admin(t, served.address);
  const c = member(served);
  await take(c.messages(), 3);
  await c.commit();
  assert.deepEqual(await groups.listGroups(), [
    { group: "g", kind: "native", protocolType: "", state: "Stable", members: 1 },
  ]);
  const d = await groups.describeGroup("g");
  assert.equal(d.state, "Stable");
  assert.equal(d.members.length, 1);
  assert.deepEqual(d.members[0]!.assignment, [{ topic: "orders", partitions: [0, 1] }]);
  assert.equal(
    d.partitions.reduce((n, p) => n + Math.max(0, p.committed), 0),
    2,
  );
  await assert.rejects(groups.resetOffsets("g", "orders", "earliest"), conchError(ErrorCode.GROUP_NOT_EMPTY));
  await c.close();
  assert.deepEqual(await groups.resetOffsets("g", "orders", { offset: 1 }), [
    { topic: "orders", partition: 0, offset: 1 },
    { topic: "orders", partition: 1, offset: 1 },
  ]);
  assert.deepEqual(await groups.fetchOffsets("g"), [
    { topic: "orders", partition: 0, offset: 1 },
    { topic: "orders", partition: 1, offset: 1 },
  ]);
  await groups.deleteGroup("g");
  assert.deepEqual(await groups.listGroups(), []);
});

/**
 * Consumer groups with kafkajs, end to end on a real broker: two members of one group split the
 * partitions when the second joins, both commit, the one left takes every partition when the
 * other leaves, and a new consumer of the group resumes from the committed offsets. `conch group
 * describe` shows the Kafka group with its members' partitions. Every wait is for an event, with
 * a deadline.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Consumer, Kafka } from "kafkajs";
import { CONCH } from "../../cli/cli-harness.js";
import { runTool, startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

const TOPIC = "orders";
const GROUP = "billing";
const PARTITIONS = 4;

/** Resolves with the first value `check` returns that is not undefined, or rejects at the deadline. */
function eventually<T>(
  what: string,
  ms: number,
  subscribe: (check: () => void) => () => void,
  probe: () => T | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = (): void => {
      done = true;
      clearTimeout(timer);
      unsubscribe();
    };
    const timer = setTimeout(() => {
      if (done) return;
      finish();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    const check = (): void => {
      if (done) return;
      const v = probe();
      if (v !== undefined) {
        finish();
        resolve(v);
      }
    };
    const unsubscribe = subscribe(check);
    check();
  });
}

interface Member {
  consumer: Consumer;
  /** The partitions of TOPIC in its latest assignment. */
  assigned: number[];
  /** Its member id, from its latest join. */
  memberId: string;
  /** Joins seen (GROUP_JOIN events). */
  joins: number;
  /** "partition:offset value" of each message it processed. */
  seen: string[];
  /** Committed offsets it saw acknowledged, by partition. */
  committed: Map<number, number>;
  /** Wakes whatever waits on this member. */
  listeners: Set<() => void>;
}

async function member(kafka: Kafka): Promise<Member> {
  const consumer = kafka.consumer({
    groupId: GROUP,
    sessionTimeout: 10_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
  });
  const m: Member = {
    consumer,
    assigned: [],
    memberId: "",
    joins: 0,
    seen: [],
    committed: new Map(),
    listeners: new Set(),
  };
  const wake = (): void => {
    for (const l of m.listeners) l();
  };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    m.assigned = [...(e.payload.memberAssignment[TOPIC] ?? [])].sort();
    m.memberId = e.payload.memberId;
    m.joins++;
    wake();
  });
  consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
    for (const t of e.payload.topics) {
      for (const p of t.partitions) m.committed.set(Number(p.partition), Number(p.offset));
    }
    wake();
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const v = message.value?.toString() ?? "";
      m.seen.push(`${partition}:${message.offset} ${v}`);
      wake();
    },
  });
  return m;
}

function waitFor<T>(what: string, members: Member[], probe: () => T | undefined, ms = 30_000): Promise<T> {
  return eventually(
    what,
    ms,
    (check) => {
      for (const m of members) m.listeners.add(check);
      return () => {
        for (const m of members) m.listeners.delete(check);
      };
    },
    probe,
  );
}

test("kafkajs group: members split the partitions, commit, the survivor takes all, a new member resumes", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic(TOPIC, PARTITIONS);
  const kafka = clients.kafkajs(f.bootstrap, { clientId: "conch-group-test" });
  const producer = kafka.producer();
  await producer.connect();
  const produce = async (round: string): Promise<string[]> => {
    const values: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      for (let i = 0; i < 2; i++) values.push(`${round}-p${p}-${i}`);
    }
    await producer.send({
      topic: TOPIC,
      messages: values.map((value) => ({ value, partition: Number(value.split("-p")[1]!.split("-")[0]) })),
    });
    return values;
  };
  const a = await member(kafka);
  await waitFor("the first member to own every partition", [a], () =>
    a.assigned.length === PARTITIONS ? true : undefined,
  );

  const b = await member(kafka);
  await waitFor("a rebalance that gives each member some partitions", [a, b], () =>
    a.assigned.length > 0 && b.assigned.length > 0 && a.assigned.length + b.assigned.length === PARTITIONS
      ? true
      : undefined,
  );
  assert.deepEqual([...a.assigned, ...b.assigned].sort(), [0, 1, 2, 3], "disjoint, covering every partition");

  const first = await produce("one");
  await waitFor("both members to process and commit the first round", [a, b], () => {
    const seen = a.seen.length + b.seen.length;
    const committed = [...a.committed.entries(), ...b.committed.entries()];
    const all = new Map(committed);
    return seen === first.length && [0, 1, 2, 3].every((p) => all.get(p) === 2) ? true : undefined;
  });
  for (const [m, parts] of [
    [a, a.assigned],
    [b, b.assigned],
  ] as const) {
    assert.ok(
      m.seen.every((s) => parts.includes(Number(s.split(":")[0]))),
      "each member processed only its own partitions",
    );
  }

  // conch group describe: the Kafka group, both members, each partition's owner and offset.
  const described = await runTool(process.execPath, [
    CONCH,
    "group",
    "describe",
    GROUP,
    "--json",
    "-b",
    f.native,
  ]);
  assert.equal(described.code, 0, described.stderr);
  const d = JSON.parse(described.stdout.toString()) as {
    members: { memberId: string; partitions?: unknown }[];
    partitions: { topic: string; partition: number; owner: string | null; committed: number | null }[];
  };
  assert.equal(d.members.length, 2);
  const owners = new Set(d.partitions.filter((p) => p.topic === TOPIC).map((p) => p.owner));
  assert.equal(owners.size, 2, `two owners: ${described.stdout}`);
  assert.deepEqual(
    d.partitions.filter((p) => p.topic === TOPIC).map((p) => p.committed),
    [2, 2, 2, 2],
  );

  const text = await runTool(process.execPath, [CONCH, "group", "describe", GROUP, "-b", f.native]);
  assert.equal(text.code, 0, text.stderr);
  for (const m of [a, b]) {
    assert.match(
      text.stdout.toString(),
      new RegExp(`^${m.memberId} +conch-group-test +${TOPIC}:${m.assigned.join(",")}$`, "m"),
      text.stdout.toString(),
    );
  }

  // b leaves: a takes every partition.
  const joinsBefore = a.joins;
  await b.consumer.disconnect();
  await waitFor("the survivor to own every partition", [a], () =>
    a.joins > joinsBefore && a.assigned.length === PARTITIONS ? true : undefined,
  );
  await a.consumer.disconnect();

  // A new member resumes from the committed offsets: it sees the second round only.
  const second = await produce("two");
  const c = await member(kafka);
  await waitFor("the new member to process the second round", [c], () =>
    c.seen.length >= second.length ? true : undefined,
  );
  assert.deepEqual(c.seen.map((s) => s.split(" ")[1]).sort(), [...second].sort());
  assert.ok(
    c.seen.every((s) => Number(s.split(":")[1]!.split(" ")[0]) >= 2),
    "resumed at the committed offsets",
  );
});

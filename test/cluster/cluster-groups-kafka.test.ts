/**
 * Consumer groups in a real 3-broker cluster with kafkajs (docs/cluster.md, "Consumer groups"):
 * the coordinator is the leader of the group's `__consumer_offsets` partition, so a group of two
 * members consumes an RF 3 topic through it and commits; when that broker is SIGKILLed, the group
 * finds the new leader of the partition, which replayed the commits, and goes on from them. No
 * acknowledged commit is lost; messages after the last commit may be delivered again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Consumer, Kafka, logLevel } from "kafkajs";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { type GroupCluster, startGroupCluster, until } from "./group-cluster.js";

const TOPIC = "cg-orders";
const GROUP = "cg-billing";
const PARTITIONS = 4;

interface Member {
  consumer: Consumer;
  /** Values processed (duplicates kept). */
  seen: string[];
  /** Partitions of its latest assignment. */
  assigned: number[];
}

describe("kafkajs consumer group in a 3-broker cluster", { skip: skipWithoutEtcd }, () => {
  let cluster: GroupCluster;
  before(async () => {
    cluster = await startGroupCluster("groups-kafka");
  });
  after(async () => {
    await cluster?.stop();
  });

  test("two members consume and commit through the coordinator; after it is SIGKILLed the group resumes from its commits", async (t) => {
    const bootstrap = cluster.brokers.map((b) => `127.0.0.1:${b.kafkaPort}`);
    const kafka = new Kafka({
      clientId: "cg-test",
      brokers: bootstrap,
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    const admin = kafka.admin();
    await admin.connect();
    t.after(() => admin.disconnect());
    await admin.createTopics({
      topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }],
      waitForLeaders: true,
    });
    const producer = kafka.producer();
    await producer.connect();
    t.after(() => producer.disconnect());
    const produce = async (round: string): Promise<string[]> => {
      const values: string[] = [];
      for (let p = 0; p < PARTITIONS; p++) for (let i = 0; i < 5; i++) values.push(`${round}-p${p}-${i}`);
      await producer.send({
        topic: TOPIC,
        acks: -1,
        messages: values.map((value) => ({ value, partition: Number(value.split("-p")[1]!.split("-")[0]) })),
      });
      return values;
    };
    const members: Member[] = [];
    t.after(async () => {
      for (const m of members) await m.consumer.disconnect().catch(() => {});
    });
    const join = async (): Promise<Member> => {
      const consumer = kafka.consumer({
        groupId: GROUP,
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 100,
      });
      const m: Member = { consumer, seen: [], assigned: [] };
      members.push(m);
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        m.assigned = [...(e.payload.memberAssignment[TOPIC] ?? [])];
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
      await consumer.run({
        autoCommitInterval: 200,
        eachMessage: async ({ message }) => {
          m.seen.push(message.value?.toString() ?? "");
        },
      });
      return m;
    };
    const committed = async (): Promise<number[]> => {
      const res = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
      return (res[0]?.partitions ?? [])
        .sort((x, y) => x.partition - y.partition)
        .map((x) => Number(x.offset));
    };
    const seenAll = (values: string[]): boolean => {
      const seen = new Set(members.flatMap((m) => m.seen));
      return values.every((v) => seen.has(v));
    };

    const a = await join();
    const b = await join();
    await until("the two members to share the partitions", 60_000, () =>
      a.assigned.length > 0 && b.assigned.length > 0 && a.assigned.length + b.assigned.length === PARTITIONS
        ? true
        : undefined,
    );
    const first = await produce("one");
    await until("both members to process the first round", 60_000, () => (seenAll(first) ? true : undefined));
    assert.ok(
      a.seen.length > 0 && b.seen.length > 0,
      `both members consumed (${a.seen.length}, ${b.seen.length})`,
    );
    await until("the group to commit every partition's end", 30_000, async () =>
      (await committed()).every((o) => o === 5) ? true : undefined,
    );

    const coordinatorId = await cluster.coordinatorId(GROUP);
    assert.ok(coordinatorId > 0, "the group's offsets partition has a leader");
    const before = await committed();
    const firstSeen = members.flatMap((m) => m.seen).length;
    await cluster.brokers.find((x) => x.brokerId === coordinatorId)!.kill();
    const killedAt = performance.now();

    const moved = await until("another broker to lead the group's offsets partition", 30_000, async () => {
      const id = await cluster.coordinatorId(GROUP).catch(() => -1);
      return id > 0 && id !== coordinatorId ? id : undefined;
    });
    // The commits came through the failover: the new coordinator answers with them, not less.
    const after = await until("the new coordinator to answer OffsetFetch", 30_000, async () =>
      committed().catch(() => undefined),
    );
    for (let p = 0; p < PARTITIONS; p++)
      assert.ok(after[p]! >= before[p]!, `partition ${p}: ${after[p]} >= ${before[p]}`);

    const answeredMs = Math.round(performance.now() - killedAt);
    const second = await produce("two");
    const producedMs = Math.round(performance.now() - killedAt);
    await until("the group to process the second round", 60_000, () => (seenAll(second) ? true : undefined));
    await until("the group to commit the second round on the new coordinator", 30_000, async () =>
      (await committed()).every((o) => o === 10) ? true : undefined,
    );
    const resumedMs = Math.round(performance.now() - killedAt);
    t.diagnostic(
      `coordinator ${coordinatorId} -> ${moved}; offsets answered after ${answeredMs} ms, second round produced after ${producedMs} ms, consumed and committed ${resumedMs} ms after the kill`,
    );
    // Resumed from the commits: nothing of the first round, all committed before the kill, is read again.
    const firstAgain = members.flatMap((m) => m.seen).filter((v) => v.startsWith("one-"));
    assert.equal(firstAgain.length, firstSeen, "no message of the committed first round was delivered again");
  });
});

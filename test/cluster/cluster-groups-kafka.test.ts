/**
 * Consumer groups in a real 3-broker cluster with kafkajs (docs/cluster.md, "Consumer groups"):
 * the coordinator is the leader of the group's `__consumer_offsets` partition, so a group of two
 * members consumes an RF 3 topic through it and commits; when that broker is SIGKILLed, the group
 * finds the new leader of the partition, which replayed the commits, and goes on from them. No
 * acknowledged commit is lost; nothing committed is delivered again.
 */
import { after, before, describe, test } from "node:test";
import type { Consumer } from "kafkajs";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { coordinatorFailover, type GroupCluster, startGroupCluster, twoMembers } from "./group-cluster.js";
import { kafkaGroupTools } from "./kafka-group-tools.js";

const TOPIC = "cg-orders";
const GROUP = "cg-billing";
const PARTITIONS = 4;

/** Waits for `work` to settle, at most `ms`. */
async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([work.then(noop, noop), late]);
  clearTimeout(timer);
}

function noop(): void {}

interface Member {
  consumer: Consumer;
  /** Values processed (duplicates kept). */
  seen: string[];
  /** Partitions of its latest assignment. */
  assigned: number;
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
    const tools = await kafkaGroupTools(t, cluster, TOPIC, GROUP, PARTITIONS);
    const members: Member[] = [];
    // A consumer that crashes is restarted while the test runs (the coordinator's SIGKILL may crash
    // it) but not once the test ends: restarted after the cluster stops, it would retry for ever
    // and keep this file's process alive. A disconnect stuck on a dead broker is not waited for.
    let ending = false;
    t.after(async () => {
      ending = true;
      for (const m of members) await settleWithin(m.consumer.disconnect(), 10_000);
    });
    for (let i = 0; i < 2; i++) {
      const consumer = tools.kafka.consumer({
        groupId: GROUP,
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 100,
        // kafkajs's own default for a consumer (5 retries, the client's timing) and the restart rule.
        retry: { retries: 5, restartOnFailure: async () => !ending },
      });
      const m: Member = { consumer, seen: [], assigned: 0 };
      members.push(m);
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        m.assigned = e.payload.memberAssignment[TOPIC]?.length ?? 0;
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
      await consumer.run({
        autoCommitInterval: 200,
        eachMessage: async ({ message }) => {
          m.seen.push(message.value?.toString() ?? "");
        },
      });
    }
    const report = await coordinatorFailover(cluster, {
      group: GROUP,
      partitions: PARTITIONS,
      ...twoMembers(members, PARTITIONS),
      produce: tools.produce,
      committed: tools.committed,
    });
    t.diagnostic(report);
  });
});

/**
 * Consumer groups of the SDK in a real 3-broker cluster (docs/cluster.md, "Consumer groups"): the
 * group consumer finds its coordinator with FindCoordinator, two members consume an RF 3 topic and
 * commit; `conch group list` (every broker asked, answers merged) and `conch group describe` (sent
 * to the coordinator) show the group from any bootstrap broker; when the coordinator is SIGKILLed
 * the members find the new one, join again and go on from the commits, none of which is lost.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import type { GroupConsumer } from "../../src/client/group-consumer.js";
import { runConch } from "../cli/cli-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import {
  coordinatorFailover,
  type GroupCluster,
  roundValues,
  startGroupCluster,
  twoMembers,
  until,
} from "./group-cluster.js";

const TOPIC = "sdk-orders";
const GROUP = "sdk-billing";
const PARTITIONS = 4;

interface Member {
  consumer: GroupConsumer;
  seen: string[];
  assigned: number;
  /** When its latest assignment came (performance.now()). */
  assignedAt: number;
}

describe("SDK consumer group in a 3-broker cluster", { skip: skipWithoutEtcd }, () => {
  let cluster: GroupCluster;
  before(async () => {
    cluster = await startGroupCluster("groups-sdk");
  });
  after(async () => {
    await cluster?.stop();
  });

  test("two members consume and commit through the coordinator; the CLI lists and describes the group; after a SIGKILL of the coordinator the group resumes from its commits", async (t) => {
    const addresses = cluster.brokers.map((b) => `127.0.0.1:${b.port}`);
    const conch = createClient({ brokers: addresses, clientId: "sdk-group-test" });
    t.after(() => conch.close());
    await conch
      .admin()
      .createTopic(TOPIC, { partitions: PARTITIONS, configs: { "replication.factor": "3" } });
    const producer = conch.producer({ acks: "all" });
    const members: Member[] = [];
    t.after(async () => {
      for (const m of members) await m.consumer.close().catch(() => {});
    });
    for (let i = 0; i < 2; i++) {
      const consumer = conch.consumer({
        group: GROUP,
        topics: [TOPIC],
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 300,
        autoCommitIntervalMs: 200,
        maxWaitMs: 100,
      });
      const m: Member = { consumer, seen: [], assigned: 0, assignedAt: 0 };
      members.push(m);
      consumer.on("rebalance", (e) => {
        m.assigned = e.partitions.length;
        m.assignedAt = performance.now();
      });
      void (async () => {
        for await (const message of consumer) m.seen.push(message.value.toString());
      })().catch(() => {});
    }
    const [a, b] = members as [Member, Member];
    const report = await coordinatorFailover(
      cluster,
      {
        group: GROUP,
        partitions: PARTITIONS,
        ...twoMembers(members, PARTITIONS),
        async produce(round) {
          const values = roundValues(round, PARTITIONS);
          for (const { value, partition } of values) {
            // A replica may not host the partition yet right after the create, and leaders move after a kill.
            await until(`the send of ${value}`, 30_000, () =>
              producer.send(TOPIC, { value, partition }).then(
                () => true,
                () => undefined,
              ),
            );
          }
          return values.map((v) => v.value);
        },
        async committed() {
          const offsets = await conch.groups().fetchOffsets(GROUP);
          return offsets
            .filter((o) => o.topic === TOPIC)
            .sort((x, y) => x.partition - y.partition)
            .map((o) => o.offset);
        },
        rejoinedSince: (since) =>
          members.every((m) => m.assignedAt > since) && a.assigned + b.assigned === PARTITIONS
            ? Math.max(a.assignedAt, b.assignedAt)
            : undefined,
      },
      async () => {
        // The CLI, bootstrapped from each broker in turn: list merges every broker's groups.
        for (const address of addresses) {
          const list = await runConch(["group", "list", "--json", "-b", address]);
          assert.equal(list.code, 0, list.stderr);
          const groups = list.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as { group: string; members: number });
          assert.deepEqual(
            groups.filter((g) => g.group === GROUP).map((g) => g.members),
            [2],
            `from ${address}: ${list.stdout}`,
          );
          const described = await runConch(["group", "describe", GROUP, "--json", "-b", address]);
          assert.equal(described.code, 0, described.stderr);
          const d = JSON.parse(described.stdout) as {
            members: unknown[];
            partitions: { committed: number }[];
          };
          assert.equal(d.members.length, 2);
          assert.deepEqual(
            d.partitions.map((p) => p.committed),
            [5, 5, 5, 5],
          );
        }
      },
    );
    t.diagnostic(report);
  });
});

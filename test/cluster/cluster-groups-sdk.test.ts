/**
 * Consumer groups of the SDK in a real 3-broker cluster (docs/cluster.md, "Consumer groups"): the
 * group consumer finds its coordinator with FindCoordinator, two members consume an RF 3 topic and
 * commit; `conch group list` (every broker asked, answers merged) and `conch group describe` (sent
 * to the coordinator) show the group; when the coordinator is SIGKILLed the members find the new
 * one, join again and go on from the commits, none of which is lost.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import type { GroupConsumer } from "../../src/client/group-consumer.js";
import { runConch } from "../cli/cli-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { type GroupCluster, startGroupCluster, until } from "./group-cluster.js";

const TOPIC = "sdk-orders";
const GROUP = "sdk-billing";
const PARTITIONS = 4;

interface Member {
  consumer: GroupConsumer;
  seen: string[];
  assigned: number;
  /** When its latest assignment came (performance.now()). */
  assignedAt: number;
  loop: Promise<void>;
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
    const produce = async (round: string): Promise<string[]> => {
      const values: string[] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        for (let i = 0; i < 5; i++) {
          const value = `${round}-p${p}-${i}`;
          values.push(value);
          // A replica may not host the partition yet right after the create, and leaders move after a kill.
          await until(`the send of ${value}`, 30_000, () =>
            producer.send(TOPIC, { value, partition: p }).then(
              () => true,
              () => undefined,
            ),
          );
        }
      }
      return values;
    };
    const members: Member[] = [];
    const join = (): Member => {
      const consumer = conch.consumer({
        group: GROUP,
        topics: [TOPIC],
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 300,
        autoCommitIntervalMs: 200,
        maxWaitMs: 100,
      });
      const m: Member = { consumer, seen: [], assigned: 0, assignedAt: 0, loop: Promise.resolve() };
      consumer.on("rebalance", (e) => {
        m.assigned = e.partitions.length;
        m.assignedAt = performance.now();
      });
      m.loop = (async () => {
        for await (const message of consumer) m.seen.push(message.value.toString());
      })().catch(() => {});
      members.push(m);
      return m;
    };
    t.after(async () => {
      for (const m of members) await m.consumer.close().catch(() => {});
    });
    const committed = async (): Promise<number[]> => {
      const offsets = await conch.groups().fetchOffsets(GROUP);
      return offsets
        .filter((o) => o.topic === TOPIC)
        .sort((x, y) => x.partition - y.partition)
        .map((o) => o.offset);
    };
    const seenAll = (values: string[]): boolean => {
      const seen = new Set(members.flatMap((m) => m.seen));
      return values.every((v) => seen.has(v));
    };

    const a = join();
    const b = join();
    await until("the two members to share the partitions", 60_000, () =>
      a.assigned > 0 && b.assigned > 0 && a.assigned + b.assigned === PARTITIONS ? true : undefined,
    );
    const first = await produce("one");
    await until("both members to process the first round", 60_000, () => (seenAll(first) ? true : undefined));
    assert.ok(
      a.seen.length > 0 && b.seen.length > 0,
      `both members consumed (${a.seen.length}, ${b.seen.length})`,
    );
    await until("the group to commit every partition's end", 30_000, async () => {
      const c = await committed().catch(() => []);
      return c.length === PARTITIONS && c.every((o) => o === 5) ? true : undefined;
    });

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
      const d = JSON.parse(described.stdout) as { members: unknown[]; partitions: { committed: number }[] };
      assert.equal(d.members.length, 2);
      assert.deepEqual(
        d.partitions.map((p) => p.committed),
        [5, 5, 5, 5],
      );
    }

    const coordinatorId = await cluster.coordinatorId(GROUP);
    assert.ok(coordinatorId > 0, "the group's offsets partition has a leader");
    const firstSeen = members.flatMap((m) => m.seen).length;
    const before = await committed();
    await cluster.brokers.find((x) => x.brokerId === coordinatorId)!.kill();
    const killedAt = performance.now();
    const moved = await until("another broker to lead the group's offsets partition", 30_000, async () => {
      const id = await cluster.coordinatorId(GROUP).catch(() => -1);
      return id > 0 && id !== coordinatorId ? id : undefined;
    });
    const after = await until("the new coordinator to answer FetchOffsets", 30_000, () =>
      committed().catch(() => undefined),
    );
    for (let p = 0; p < PARTITIONS; p++)
      assert.ok(after[p]! >= before[p]!, `partition ${p}: ${after[p]} >= ${before[p]}`);

    const answeredMs = Math.round(performance.now() - killedAt);
    await until("the members to join the new coordinator", 60_000, () =>
      members.every((m) => m.assignedAt > killedAt) && a.assigned + b.assigned === PARTITIONS
        ? true
        : undefined,
    );
    const rejoinedMs = Math.round(Math.max(...members.map((m) => m.assignedAt)) - killedAt);
    const second = await produce("two");
    const producedMs = Math.round(performance.now() - killedAt);
    await until("the group to process the second round", 60_000, () => (seenAll(second) ? true : undefined));
    await until("the group to commit the second round on the new coordinator", 30_000, async () => {
      const c = await committed().catch(() => []);
      return c.length === PARTITIONS && c.every((o) => o === 10) ? true : undefined;
    });
    t.diagnostic(
      `coordinator ${coordinatorId} -> ${moved}; offsets answered after ${answeredMs} ms, group rejoined after ${rejoinedMs} ms, second round produced after ${producedMs} ms, consumed and committed ${Math.round(performance.now() - killedAt)} ms after the kill`,
    );
    const firstAgain = members.flatMap((m) => m.seen).filter((v) => v.startsWith("one-"));
    assert.equal(firstAgain.length, firstSeen, "no message of the committed first round was delivered again");
  });
});

/**
 * A confluent-kafka (librdkafka) consumer group in a real 3-broker cluster (docs/cluster.md,
 * "Consumer groups"): two member processes consume an RF 3 topic through the group's coordinator
 * and commit; when the coordinator is SIGKILLed, librdkafka finds the new one and the group goes on
 * from its commits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { hasPythonModule, PYTHON } from "../kafka/server/kafka-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { coordinatorFailover, type GroupCluster, startGroupCluster, twoMembers } from "./group-cluster.js";
import { kafkaGroupTools } from "./kafka-group-tools.js";

const TOPIC = "py-orders";
const GROUP = "py-billing";
const PARTITIONS = 4;

/** A group member: prints "assigned <n>" at each assignment and each value it consumes; commits every 200 ms. */
const MEMBER = `
import sys
from confluent_kafka import Consumer
bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
def assigned(consumer, partitions):
    print("assigned", len(partitions), flush=True)
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": True, "auto.commit.interval.ms": 200,
              "session.timeout.ms": 10000, "heartbeat.interval.ms": 500,
              "topic.metadata.refresh.interval.ms": 1000})
c.subscribe([topic], on_assign=assigned)
try:
    while True:
        m = c.poll(0.2)
        if m is None or m.error(): continue
        print("value", m.value().decode(), flush=True)
finally:
    c.close()
`;

interface Member {
  child: ChildProcess;
  seen: string[];
  assigned: number;
}

describe("confluent-kafka consumer group in a 3-broker cluster", { skip: skipWithoutEtcd }, () => {
  let cluster: GroupCluster;
  before(async () => {
    cluster = await startGroupCluster("groups-python");
  });
  after(async () => {
    await cluster?.stop();
  });

  test("two librdkafka members consume and commit through the coordinator; after it is SIGKILLed the group resumes from its commits", async (t) => {
    if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
    const tools = await kafkaGroupTools(t, cluster, TOPIC, GROUP, PARTITIONS);
    const members: Member[] = [];
    t.after(() => {
      for (const m of members) m.child.kill("SIGKILL");
    });
    for (let i = 0; i < 2; i++) {
      const child = spawn(PYTHON, ["-c", MEMBER, tools.bootstrap.join(","), TOPIC, GROUP], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const m: Member = { child, seen: [], assigned: 0 };
      members.push(m);
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        const [kind, rest] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
        if (kind === "assigned") m.assigned = Number(rest);
        else if (kind === "value") m.seen.push(rest);
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

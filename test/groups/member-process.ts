/**
 * A group member in a process of its own, for the test that kills one with SIGKILL. It reads slowly
 * and never commits, and prints "joined <generation> <partitions>" and "msg <value>" lines.
 * Without CONCH_GROUP_MEMBER in its environment (a test runner loading every file) it does nothing.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { GroupConsumer } from "../../src/client/group-consumer.js";

interface MemberConfig {
  address: string;
  group: string;
  topic: string;
  sessionTimeoutMs: number;
  perMessageMs: number;
}

const raw = process.env.CONCH_GROUP_MEMBER;
if (raw !== undefined) {
  const config = JSON.parse(raw) as MemberConfig;
  const consumer = new GroupConsumer(
    { brokers: [config.address], clientId: "doomed" },
    {
      group: config.group,
      topics: [config.topic],
      sessionTimeoutMs: config.sessionTimeoutMs,
      autoCommit: false,
    },
  );
  consumer.on("rebalance", (e: { generation: number; partitions: unknown[] }) => {
    process.stdout.write(`joined ${e.generation} ${e.partitions.length}\n`);
  });
  for await (const m of consumer) {
    process.stdout.write(`msg ${m.value.toString()}\n`);
    await sleep(config.perMessageMs);
  }
}

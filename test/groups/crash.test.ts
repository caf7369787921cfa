/**
 * A member that dies without leaving (SIGKILL): its partitions move to the others once its session
 * runs out, and nothing is lost. What it read but never committed is read again by the new owners,
 * so the only duplicates are messages the dead member had seen.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { GroupConsumer } from "../../src/client/group-consumer.js";
import { described, fill, serve, until } from "./helpers.js";

const SESSION_MS = 1500;
/**
 * After the session runs out: the coordinator's sweep (every 100 ms), the survivors' next heartbeat
 * (every sessionTimeout / 3) telling them to rejoin, and the join and sync themselves, with room
 * for a loaded machine.
 */
const REBALANCE_SLACK_MS = 1500;

test("a killed member's partitions are reassigned and every message is delivered", async (t) => {
  const { broker, address } = await serve(t);
  await broker.createTopic("jobs", 6);
  const all = await fill(broker, "jobs", 6, 40);

  // The member that will die: reads slowly, commits nothing.
  const child = spawn(process.execPath, [new URL("./member-process.js", import.meta.url).pathname], {
    env: {
      ...process.env,
      CONCH_GROUP_MEMBER: JSON.stringify({
        address,
        group: "workers",
        topic: "jobs",
        sessionTimeoutMs: SESSION_MS,
        perMessageMs: 20,
      }),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.after(() => child.kill("SIGKILL"));
  const childSeen = new Set<string>();
  let pending = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("msg ")) childSeen.add(line.slice(4));
  });
  await until(() => described(broker, "workers")?.members.length === 1, "the child to join", 15_000);

  // Two members in this process, reading a little slower than the broker can serve.
  const counts = new Map<string, number>();
  const members: GroupConsumer[] = [];
  const loops: Promise<void>[] = [];
  for (let i = 0; i < 2; i++) {
    const c = new GroupConsumer(
      { brokers: [address], clientId: `survivor-${i}` },
      { group: "workers", topics: ["jobs"], sessionTimeoutMs: SESSION_MS, autoCommitIntervalMs: 200 },
    );
    members.push(c);
    t.after(() => c.close());
    loops.push(
      (async () => {
        for await (const m of c) {
          const v = m.value.toString();
          counts.set(v, (counts.get(v) ?? 0) + 1);
          await sleep(2);
        }
      })(),
    );
  }
  await until(() => {
    const d = broker.groups.describeGroup("workers");
    return (
      d.state === "Stable" && d.members.length === 3 && members.every((c) => c.generation === d.generation)
    );
  }, "three members in a stable group");
  const d = broker.groups.describeGroup("workers");
  for (const m of d.members)
    assert.equal(m.assignment[0]?.partitions.length, 2, "range: two partitions each");

  await until(() => childSeen.size >= 10, "the child to read some messages");
  const killedAt = performance.now();
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
  const seenByChild = new Set(childSeen);

  // Within the session timeout (plus the rebalance itself), counted from the kill, the survivors
  // own everything; then they read what the child left.
  await until(
    () => {
      const g = broker.groups.describeGroup("workers");
      return g.state === "Stable" && g.members.length === 2;
    },
    `the dead member's partitions to be reassigned within ${SESSION_MS} + ${REBALANCE_SLACK_MS} ms of the kill`,
    SESSION_MS + REBALANCE_SLACK_MS - (performance.now() - killedAt),
  );
  t.diagnostic(`reassigned ${Math.round(performance.now() - killedAt)} ms after the kill`);
  const owned = broker.groups
    .describeGroup("workers")
    .members.flatMap((m) => m.assignment.flatMap((a) => a.partitions))
    .sort();
  assert.deepEqual(owned, [0, 1, 2, 3, 4, 5]);
  await until(() => [...all].every((v) => counts.has(v) || seenByChild.has(v)), "every message", 15_000);
  await until(
    () => [...all].every((v) => counts.has(v)),
    "the survivors to read what the child never committed",
    15_000,
  );

  // Nothing lost; a message was read twice only if the dead member had read it (and not committed).
  for (const [v, n] of counts) {
    assert.ok(all.has(v), `unexpected message ${v}`);
    if (n > 1) assert.ok(seenByChild.has(v), `${v} read ${n} times by the survivors`);
  }
  assert.ok(seenByChild.size > 0);
  await Promise.all(members.map((c) => c.close()));
  await Promise.all(loops);
});

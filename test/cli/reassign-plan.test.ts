import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MAX_PLAN_BYTES, parseReplicaList, readReassignPlan } from "../../src/cli/reassign-plan.js";
import { UsageError } from "../../src/cli/usage-error.js";

test("a reassignment plan in kafka-reassign-partitions' shape is read; a malformed or oversized one is refused", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "conch-plan-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const plan = join(dir, "plan.json");
  await writeFile(
    plan,
    JSON.stringify({
      version: 1,
      partitions: [{ topic: "orders", partition: 2, replicas: [4, 2, 3], log_dirs: ["any"] }],
    }),
  );
  assert.deepEqual(await readReassignPlan(plan), [{ topic: "orders", partition: 2, replicas: [4, 2, 3] }]);
  for (const bad of [
    "{",
    "{}",
    '{"partitions":[]}',
    '{"partitions":[{"topic":"t","partition":-1,"replicas":[1]}]}',
    '{"partitions":[{"topic":"t","partition":0,"replicas":["1"]}]}',
  ]) {
    await writeFile(plan, bad);
    await assert.rejects(readReassignPlan(plan), UsageError, bad);
  }
  await writeFile(plan, " ".repeat(MAX_PLAN_BYTES + 1));
  await assert.rejects(readReassignPlan(plan), /at most/);
  assert.deepEqual(parseReplicaList("4, 2,3"), [4, 2, 3]);
  assert.throws(() => parseReplicaList("4,,2"), UsageError);
  assert.throws(() => parseReplicaList("-1"), UsageError);
});

/**
 * SIGKILL of the leader under acks=all load from a Kafka client (failover-rounds.ts), as many
 * rounds as fit in about 45 s: not one acknowledged record lost or moved, every round resumes
 * within the failover target (5 s from the kill to the new leader's first acknowledgement; about
 * 2 s of it is the lease), and the replicas end byte-identical. The SDK's rounds are
 * sdk-failover.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasPythonModule } from "../kafka/server/kafka-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { checkFailover, runFailoverRounds } from "./failover-rounds.js";

/** The target: kill to the new leader's first acknowledgement (lease TTL 2 s). */
const RESUME_BOUND_MS = 5_000;

test("SIGKILL of the leader under Kafka acks=-1 load: resumes within 5 s every round, every acknowledged record read back at its offset", {
  skip: skipWithoutEtcd,
  timeout: 85_000,
}, async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const r = await runFailoverRounds({ maxRounds: 10, budgetMs: 45_000, log: (line) => t.diagnostic(line) });
  assert.ok(r.resumeMs.length >= 3, `only ${r.resumeMs.length} round(s) ran`);
  checkFailover(r, RESUME_BOUND_MS);
});

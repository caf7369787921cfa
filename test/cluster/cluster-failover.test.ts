/**
 * SIGKILL of the leader under acks=all load from a Kafka client (failover-rounds.ts), as many
 * rounds as fit in about 45 s: not one acknowledged record lost or moved, every round resumes
 * (within a bound far above the failover target: how fast it resumes is measured by
 * bench/cluster-kill-under-load.ts, not asserted by a timed test on a shared machine), and the
 * replicas end byte-identical.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasPythonModule } from "../kafka/server/kafka-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { runFailoverRounds } from "./failover-rounds.js";

/** A round that has not resumed by then has not failed over at all (the lease is 2 s). */
const RESUME_BOUND_MS = 30_000;

test("SIGKILL of the leader under Kafka acks=-1 load: every acknowledged record read back at its offset", {
  skip: skipWithoutEtcd,
  timeout: 85_000,
}, async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const r = await runFailoverRounds({ maxRounds: 10, budgetMs: 45_000, log: (line) => t.diagnostic(line) });
  assert.ok(r.resumeMs.length >= 3, `only ${r.resumeMs.length} round(s) ran`);
  for (const ms of r.resumeMs) assert.ok(ms < RESUME_BOUND_MS, `producing resumed after ${ms.toFixed(0)} ms`);
  assert.ok(r.acked.size > 0);
  for (const [offset, value] of r.acked) assert.equal(r.read.get(offset), value, `offset ${offset}`);
  assert.ok((r.replicas[0]?.length ?? 0) > 0);
  assert.deepEqual(r.replicas[1], r.replicas[0]);
  assert.deepEqual(r.replicas[2], r.replicas[0]);
});

/**
 * SIGSTOP of the leader past its lease under Kafka acks=-1 load, then SIGCONT (failover-rounds.ts):
 * the paused leader acknowledges nothing (every acknowledged record is read back at its offset from
 * the new leader's log), and it rejoins the ISR as a follower, its log cut back to match: the
 * replicas end byte-identical.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasPythonModule } from "../kafka/server/kafka-harness.js";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { checkFailover, runFailoverRounds } from "./failover-rounds.js";

test("SIGSTOP of the leader past its lease, then SIGCONT: it acknowledges nothing and rejoins with the new leader's log", {
  skip: skipWithoutEtcd,
  timeout: 85_000,
}, async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const r = await runFailoverRounds({
    signal: "SIGSTOP",
    // One round: pausing leaders round after round hung at the second or third (left open).
    maxRounds: 1,
    budgetMs: 40_000,
    log: (line) => t.diagnostic(line),
  });
  assert.equal(r.resumeMs.length, 1);
  // Resuming at all is asserted: a paused leader's clients wait out their request timeout too.
  checkFailover(r, 30_000);
});

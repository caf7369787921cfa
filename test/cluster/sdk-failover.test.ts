/**
 * SIGKILL of the leader under acks=all load from our SDK (failover-rounds.ts with the SDK's
 * producer: it finds each new leader through Metadata by itself), ten rounds: every acknowledged
 * record read back at its acknowledged offset by our consumer, producing resumes within the
 * failover target in every round, and the replicas end byte-identical.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { skipWithoutEtcd } from "./etcd-harness.js";
import { checkFailover, runFailoverRounds } from "./failover-rounds.js";

/** The target: kill to the new leader's first acknowledgement (lease TTL 2 s). */
const RESUME_BOUND_MS = 5_000;

test("SIGKILL of the leader under SDK acks=all load, 10 rounds: resumes within 5 s, every acknowledged record read back at its offset", {
  skip: skipWithoutEtcd,
  timeout: 180_000,
}, async (t) => {
  const r = await runFailoverRounds({
    client: "sdk",
    maxRounds: 10,
    budgetMs: 150_000,
    log: (line) => t.diagnostic(line),
  });
  assert.equal(r.resumeMs.length, 10);
  checkFailover(r, RESUME_BOUND_MS);
});

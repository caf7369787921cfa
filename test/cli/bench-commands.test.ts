import assert from "node:assert/strict";
import { test } from "node:test";
import { runConch, useSharedBroker } from "./cli-harness.js";

const shared = useSharedBroker();

const FIELDS = ["messages", "seconds", "msgs_per_s", "mb_per_s", "p50_ms", "p99_ms", "p999_ms", "gc_share"];

function report(stdout: string): Record<string, number | null> {
  const lines = stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one JSON line on stdout, got: ${stdout}`);
  const r = JSON.parse(lines[0]!) as Record<string, number | null>;
  assert.deepEqual(Object.keys(r), FIELDS);
  return r;
}

test("bench produce then bench consume: one JSON line each, with the messages that moved", async () => {
  const common = ["--topic", "b", "--size", "50", "--broker", shared.broker.address, "--json"];
  const produced = await runConch(["bench", "produce", "--messages", "20000", "--batch", "500", ...common]);
  assert.equal(produced.code, 0, produced.stderr);
  const p = report(produced.stdout);
  assert.equal(p.messages, 20000);
  assert.ok(p.seconds! > 0 && p.msgs_per_s! > 0);
  // MB/s counts value bytes: 50 per message (both rates come from the same clock; mb_per_s is rounded to 0.01).
  assert.ok(Math.abs(p.mb_per_s! - (p.msgs_per_s! * 50) / 1e6) <= 0.006, JSON.stringify(p));
  assert.ok(p.p50_ms! > 0 && p.p50_ms! <= p.p99_ms! && p.p99_ms! <= p.p999_ms!);
  assert.ok(p.gc_share! >= 0 && p.gc_share! < 1);

  const described = await runConch(["topic", "describe", "b", "--json", "--broker", shared.broker.address]);
  assert.equal(
    (JSON.parse(described.stdout) as { partitions: { latest: number }[] }).partitions[0]!.latest,
    20000,
  );

  // 30000 wanted, 20000 stored: the bench fills in 10000 first.
  const consumed = await runConch(["bench", "consume", "--messages", "30000", ...common]);
  assert.equal(consumed.code, 0, consumed.stderr);
  const c = report(consumed.stdout);
  assert.equal(c.messages, 30000);
  assert.equal(c.p50_ms, null);
  assert.match(consumed.stderr, /filling b with 10000 messages/);
});

test("bench latency: end-to-end percentiles at a fixed rate", async () => {
  const r = await runConch([
    "bench",
    "latency",
    "--topic",
    "lat",
    "--partitions",
    "2",
    "--messages",
    "2000",
    "--rate",
    "2000",
    "--broker",
    shared.broker.address,
    "--json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const l = report(r.stdout);
  assert.equal(l.messages, 2000);
  assert.ok(l.p50_ms! > 0 && l.p50_ms! <= l.p999_ms!);
  // At 2000 msg/s, 2000 messages cannot take much less than a second.
  assert.ok(l.seconds! >= 0.9, `${l.seconds}`);
});

test("bench without --json prints one line for people", async () => {
  const r = await runConch([
    "bench",
    "produce",
    "--messages",
    "1000",
    "--topic",
    "h",
    "--broker",
    shared.broker.address,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^bench produce: 1000 messages in [\d.]+ s = [\d.]+ msg\/s, [\d.]+ MB\/s; latency p50 /,
  );
});

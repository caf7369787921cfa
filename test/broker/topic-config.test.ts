import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveBrokerConfig } from "../../src/broker/broker-config.js";
import {
  describeTopicConfig,
  effectiveTopicConfig,
  mergeOverrides,
  parseTopicConfigs,
  TOPIC_CONFIG_KEYS,
} from "../../src/broker/topic-config.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

const broker = resolveBrokerConfig({ retentionMs: 5000, flush: "none" });

test("overrides are validated and kept in canonical form", () => {
  const o = parseTopicConfigs({
    "cleanup.policy": "delete, compact",
    "retention.ms": "-1",
    "retention.bytes": "1048576",
    "segment.bytes": "4096",
    flush: "sync",
    "flush.interval.ms": "10",
    "delete.retention.ms": "0",
    "min.compaction.lag.ms": "100",
    "corrupt.data": "skip",
    "min.insync.replicas": "2",
  });
  assert.equal(o["cleanup.policy"], "compact,delete");
  assert.equal(o["retention.ms"], "-1");
  assert.deepEqual(Object.keys(o).sort(), [...TOPIC_CONFIG_KEYS].sort());
});

test("unknown keys and bad values fail with INVALID_CONFIG naming the key", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ "retention.mss": "1" }, /unknown topic config "retention.mss"/],
    [{ "cleanup.policy": "shred" }, /invalid topic config cleanup.policy/],
    [{ "retention.ms": "soon" }, /invalid topic config retention.ms: expected -1 or an integer/],
    [{ "retention.ms": "0" }, /invalid topic config retention.ms/],
    [{ "segment.bytes": "12" }, /invalid topic config segment.bytes/],
    [{ flush: "sometimes" }, /invalid topic config flush/],
    [{ "flush.interval.ms": "0" }, /invalid topic config flush.interval.ms/],
    [{ "min.compaction.lag.ms": "-1" }, /invalid topic config min.compaction.lag.ms/],
    [{ "min.insync.replicas": "0" }, /invalid topic config min.insync.replicas/],
    [{ "corrupt.data": "ignore" }, /invalid topic config corrupt.data/],
    [{ "delete.retention.ms": "" }, /invalid topic config delete.retention.ms/],
  ];
  for (const [configs, pattern] of cases) {
    assert.throws(
      () => parseTopicConfigs(configs),
      (err: unknown) =>
        err instanceof ConchError && err.code === ErrorCode.INVALID_CONFIG && pattern.test(err.message),
      String(pattern),
    );
  }
});

test("effective config: overrides over the broker settings, every key described", () => {
  const eff = effectiveTopicConfig(parseTopicConfigs({ "segment.bytes": "2048" }), broker);
  assert.equal(eff.segmentBytes, 2048);
  assert.equal(eff.retentionMs, 5000);
  assert.equal(eff.flush, "none");
  assert.equal(eff.cleanupPolicy, "delete");
  const described = describeTopicConfig(eff);
  assert.deepEqual(Object.keys(described), [...TOPIC_CONFIG_KEYS]);
  assert.equal(described["segment.bytes"], "2048");
  assert.equal(described["retention.ms"], "5000");
  assert.equal(described["delete.retention.ms"], "86400000");
});

test("merging: new values replace, an empty value removes the override", () => {
  const current = parseTopicConfigs({ "retention.ms": "1000", flush: "sync" });
  const changes = parseTopicConfigs({ "retention.ms": "", "segment.bytes": "4096" }, true);
  assert.deepEqual(mergeOverrides(current, changes), { flush: "sync", "segment.bytes": "4096" });
  assert.deepEqual(current, { "retention.ms": "1000", flush: "sync" }, "input left unchanged");
});

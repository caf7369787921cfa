import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import { LineHelper } from "../../src/storage/line-helper.js";
import { batchOf, conchError, openBroker, recordsOf } from "./helpers.js";

test("create, list, describe, delete", async (t) => {
  const { broker, dataDir } = await openBroker(t, { retentionMs: 60_000 });
  await broker.createTopic("orders", 3, { "retention.ms": "1000" });
  await broker.createTopic("audit", 1);
  assert.deepEqual(broker.listTopics(), ["audit", "orders"]);

  const d = broker.describeTopic("orders");
  assert.equal(d.name, "orders");
  assert.equal(d.internal, false);
  assert.deepEqual(d.partitions, [
    { partition: 0, logStartOffset: 0, highWatermark: 0, quarantined: [] },
    { partition: 1, logStartOffset: 0, highWatermark: 0, quarantined: [] },
    { partition: 2, logStartOffset: 0, highWatermark: 0, quarantined: [] },
  ]);
  assert.equal(d.configs["retention.ms"], "1000");
  assert.equal(d.configs.flush, "interval");
  assert.equal(broker.describeTopic("audit").configs["retention.ms"], "60000");
  assert.equal(broker.partition("orders", 2).config.retentionMs, 1000, "the override reaches the log");
  assert.equal(broker.partition("audit", 0).config.retentionMs, 60_000);

  const meta = JSON.parse(await readFile(join(dataDir, "topics", "orders", "topic.json"), "utf8"));
  assert.deepEqual(meta, { version: 1, name: "orders", partitions: 3, configs: { "retention.ms": "1000" } });
  assert.ok(existsSync(join(dataDir, "topics", "orders", "2")));

  await broker.deleteTopic("orders");
  assert.deepEqual(broker.listTopics(), ["audit"]);
  assert.equal(existsSync(join(dataDir, "topics", "orders")), false);
  assert.throws(
    () => broker.describeTopic("orders"),
    conchError(ErrorCode.UNKNOWN_TOPIC, /unknown topic "orders"/),
  );
  // The name is free again.
  await broker.createTopic("orders", 1);
  assert.equal(broker.describeTopic("orders").partitions.length, 1);
});

test("admin errors carry the right codes", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 2);
  await assert.rejects(broker.createTopic("t", 1), conchError(ErrorCode.TOPIC_ALREADY_EXISTS));
  await assert.rejects(broker.createTopic("../evil", 1), conchError(ErrorCode.INVALID_TOPIC_NAME));
  await assert.rejects(broker.createTopic("__mine", 1), conchError(ErrorCode.INVALID_TOPIC_NAME, /reserved/));
  for (const n of [0, -1, 10_001, 1.5, Number.NaN]) {
    await assert.rejects(
      broker.createTopic(`p${n}`.replace(/[^A-Za-z0-9]/g, "_"), n),
      conchError(ErrorCode.INVALID_PARTITIONS),
    );
  }
  await assert.rejects(
    broker.createTopic("c", 1, { "retention.ms": "x" }),
    conchError(ErrorCode.INVALID_CONFIG),
  );
  await assert.rejects(broker.createTopic("c", 1, { bogus: "1" }), conchError(ErrorCode.INVALID_CONFIG));
  assert.deepEqual(broker.listTopics(), ["t"], "failed creates leave nothing behind");
  await assert.rejects(broker.deleteTopic("nope"), conchError(ErrorCode.UNKNOWN_TOPIC));
  await assert.rejects(broker.alterTopic("nope", {}), conchError(ErrorCode.UNKNOWN_TOPIC));
  assert.throws(() => broker.partition("t", 2), conchError(ErrorCode.UNKNOWN_PARTITION, /has 2 partition/));
  assert.throws(() => broker.partition("t", -1), conchError(ErrorCode.UNKNOWN_PARTITION));
  assert.throws(() => broker.partition("nope", 0), conchError(ErrorCode.UNKNOWN_TOPIC));
});

test("concurrent creates of one name: exactly one wins", async (t) => {
  const { broker } = await openBroker(t);
  const results = await Promise.allSettled([broker.createTopic("x", 1), broker.createTopic("x", 2)]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected"],
  );
  assert.equal(broker.describeTopic("x").partitions.length, 1);
});

test("alter updates overrides, the logs' config, and survives reopen", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  await broker.createTopic("t", 1, { "retention.ms": "5000", flush: "sync" });
  const log = broker.partition("t", 0);
  const seen: unknown[] = [];
  const update = log.updateConfig.bind(log);
  log.updateConfig = (c) => {
    seen.push(c);
    update(c);
  };
  await broker.alterTopic("t", { "retention.ms": "", "segment.bytes": "2048", "cleanup.policy": "compact" });
  const configs = broker.describeTopic("t").configs;
  assert.equal(configs["retention.ms"], String(broker.config.retentionMs), "override removed");
  assert.equal(configs["segment.bytes"], "2048");
  assert.equal(configs.flush, "sync", "untouched override kept");
  assert.equal(configs["cleanup.policy"], "compact");
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0], {
    segmentBytes: 2048,
    segmentMs: broker.config.segmentMs,
    indexIntervalBytes: broker.config.indexIntervalBytes,
    flush: "sync",
    flushIntervalMs: broker.config.flushIntervalMs,
    retentionMs: broker.config.retentionMs,
    retentionBytes: -1,
    maxBatchBytes: broker.config.maxBatchBytes,
    cleanupPolicy: "compact",
    deleteRetentionMs: 86_400_000,
    minCompactionLagMs: 0,
    compactionDelayMs: 30_000,
    compactionBytesPerSec: -1,
    corruptData: "fail",
    metrics: true,
    directReads: "auto",
    producerIdExpirationMs: 86_400_000,
    maxProducerIds: 1000,
  });
  await assert.rejects(
    broker.alterTopic("t", { flush: "never" }),
    conchError(ErrorCode.INVALID_CONFIG, /flush/),
  );
  await broker.close();

  const again = await Broker.open({ dataDir });
  t.after(() => again.close());
  const reopened = again.describeTopic("t").configs;
  assert.equal(reopened["segment.bytes"], "2048");
  assert.equal(reopened.flush, "sync");
  assert.equal(reopened["retention.ms"], String(again.config.retentionMs));
});

test("topics and their data persist across reopen", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  await broker.createTopic("a", 2);
  await broker.createTopic("b", 1, { "segment.bytes": "4096" });
  await broker.produce("a", 1, batchOf(["x", "y"]), "leader");
  await broker.produce("b", 0, batchOf(["z"]), "durable");
  await broker.close();

  const again = await Broker.open({ dataDir });
  t.after(() => again.close());
  assert.deepEqual(again.listTopics(), ["a", "b"]);
  assert.equal(again.describeTopic("a").partitions.length, 2);
  assert.equal(again.describeTopic("b").configs["segment.bytes"], "4096");
  const r = await again.fetch({
    topic: "a",
    partition: 1,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.deepEqual(recordsOf(r.records), [
    [0, "x"],
    [1, "y"],
  ]);
  assert.equal(r.highWatermark, 2);
  assert.deepEqual(
    recordsOf(
      (
        await again.fetch({
          topic: "b",
          partition: 0,
          offset: 0,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
          minBytes: 1,
        })
      ).records,
    ),
    [[0, "z"]],
  );
});

test("addPartitions grows a topic and keeps existing data", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  await broker.createTopic("g", 1);
  await broker.produce("g", 0, batchOf(["keep"]), "leader");
  await broker.addPartitions("g", 3);
  assert.equal(broker.describeTopic("g").partitions.length, 3);
  await broker.produce("g", 2, batchOf(["new"]), "leader");
  await assert.rejects(broker.addPartitions("g", 3), conchError(ErrorCode.INVALID_PARTITIONS, /only grow/));
  await assert.rejects(broker.addPartitions("g", 10_001), conchError(ErrorCode.INVALID_PARTITIONS));
  await broker.close();

  const again = await Broker.open({ dataDir });
  t.after(() => again.close());
  assert.equal(again.describeTopic("g").partitions.length, 3);
  assert.deepEqual(
    recordsOf(
      (
        await again.fetch({
          topic: "g",
          partition: 0,
          offset: 0,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
          minBytes: 1,
        })
      ).records,
    ),
    [[0, "keep"]],
  );
  assert.deepEqual(
    recordsOf(
      (
        await again.fetch({
          topic: "g",
          partition: 2,
          offset: 0,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
          minBytes: 1,
        })
      ).records,
    ),
    [[0, "new"]],
  );
});

test("internal topics: created through the internal API only, readable, not writable by clients", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  await assert.rejects(broker.ensureInternalTopic("offsets", 1), conchError(ErrorCode.INVALID_TOPIC_NAME));
  const topic = await broker.ensureInternalTopic("__offsets", 2, { "cleanup.policy": "compact" });
  assert.equal(topic.internal, true);
  assert.equal(topic.partitionCount, 2);
  assert.equal(
    await broker.ensureInternalTopic("__offsets", 2),
    topic,
    "opening again returns the same topic",
  );
  assert.deepEqual(broker.listTopics(), ["__offsets"]);
  assert.equal(broker.describeTopic("__offsets").internal, true);

  // A compacted topic takes only records with keys.
  const keyed = new BatchBuilder({ slabBytes: 4096 });
  keyed.add("member-a", "group-1");
  await topic.partition(1).append(keyed.finish());
  await assert.rejects(
    broker.produce("__offsets", 1, batchOf(["x"]), "leader"),
    conchError(ErrorCode.INVALID_TOPIC_NAME, /internal/),
  );
  await assert.rejects(broker.deleteTopic("__offsets"), conchError(ErrorCode.INVALID_TOPIC_NAME));
  await assert.rejects(broker.alterTopic("__offsets", {}), conchError(ErrorCode.INVALID_TOPIC_NAME));
  const r = await broker.fetch({
    topic: "__offsets",
    partition: 1,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.deepEqual(recordsOf(r.records), [[0, "member-a"]]);
  await broker.close();

  const again = await Broker.open({ dataDir });
  t.after(() => again.close());
  assert.equal(again.describeTopic("__offsets").configs["cleanup.policy"], "compact");
  await again.close();
});

test("after close every call fails with SHUTTING_DOWN; close is idempotent", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const first = broker.close();
  assert.equal(broker.close(), first);
  await first;
  const shutting = conchError(ErrorCode.SHUTTING_DOWN);
  await assert.rejects(broker.createTopic("u", 1), shutting);
  await assert.rejects(broker.deleteTopic("t"), shutting);
  await assert.rejects(broker.alterTopic("t", {}), shutting);
  await assert.rejects(broker.produce("t", 0, batchOf(["x"]), "leader"), shutting);
  await assert.rejects(
    broker.fetch({ topic: "t", partition: 0, offset: 0, maxBytes: 100, maxWaitMs: 0, minBytes: 1 }),
    shutting,
  );
  await assert.rejects(broker.listOffsets("t", 0, { kind: "latest" }), shutting);
  await assert.rejects(broker.ensureInternalTopic("__x", 1), shutting);
  assert.throws(() => broker.listTopics(), shutting);
  assert.throws(() => broker.describeTopic("t"), shutting);
  assert.throws(() => broker.partition("t", 0), shutting);
});

test("an admin operation begun before close completes; close waits for it", async (t) => {
  const { broker } = await openBroker(t);
  const creating = broker.createTopic("late", 1);
  const closing = broker.close();
  await creating;
  await closing;
  assert.ok(existsSync(join(broker.dataDir, "topics", "late", "topic.json")));
});

test("the broker's compaction settings reach every partition log", async (t) => {
  const { broker } = await openBroker(t, { compactionDelayMs: 5_000, compactionBytesPerSec: 1 << 20 });
  await broker.createTopic("kv", 2, { "cleanup.policy": "compact" });
  for (const p of [0, 1]) {
    const config = broker.partition("kv", p).config;
    assert.equal(config.compactionDelayMs, 5_000);
    assert.equal(config.compactionBytesPerSec, 1 << 20);
  }
});

test("a broker starts the storage's shell helpers as it opens, before it holds data", async (t) => {
  // Any helper made before the open is started by it (line-helper.ts: the fork is cheap then).
  const helper = new LineHelper("while read -r l; do echo ok; done");
  assert.equal(helper.running, false);
  await openBroker(t);
  assert.equal(helper.running, true);
  assert.equal(await helper.ask("x"), true);
});

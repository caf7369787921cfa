import assert from "node:assert/strict";
import { test } from "node:test";
import { loadBrokerConfig } from "../../src/broker/broker-config.js";
import { ErrorCode } from "../../src/format/errors.js";
import { MAX_BATCH_BYTES_LIMIT } from "../../src/storage/config.js";
import { conchError, openBroker } from "./helpers.js";

const refused = (err: unknown): boolean =>
  conchError(ErrorCode.INVALID_PARTITIONS)(err) && /maxPartitions/.test((err as Error).message);

test("maxPartitions caps partitions across topics on create, addPartitions and auto-create", async (t) => {
  const { broker } = await openBroker(t, { maxPartitions: 5, autoCreateTopics: true, defaultPartitions: 2 });
  await broker.createTopic("a", 3);
  await assert.rejects(broker.createTopic("b", 3), refused);
  assert.deepEqual(broker.listTopics(), ["a"]);
  await assert.rejects(broker.addPartitions("a", 6), refused);
  assert.equal(broker.describeTopic("a").partitions.length, 3);
  await broker.addPartitions("a", 4);
  await assert.rejects(
    broker.fetch({ topic: "auto", partition: 0, offset: 0, maxBytes: 1024, maxWaitMs: 0, minBytes: 1 }),
    refused,
  );
  await broker.createTopic("b", 1);
  await assert.rejects(broker.createTopic("c", 1), refused);
  // Deleting a topic gives its partitions back.
  await broker.deleteTopic("b");
  await broker.createTopic("c", 1);
});

test("maxPartitions: default 10,000, settable by flag and environment", () => {
  assert.equal(loadBrokerConfig({ env: {} }).maxPartitions, 10_000);
  assert.equal(loadBrokerConfig({ env: { CONCH_MAX_PARTITIONS: "7" } }).maxPartitions, 7);
  assert.equal(loadBrokerConfig({ env: {}, flags: { maxPartitions: "9" } }).maxPartitions, 9);
  assert.throws(
    () => loadBrokerConfig({ env: { CONCH_MAX_PARTITIONS: "0" } }),
    conchError(ErrorCode.INVALID_CONFIG),
  );
});

test("maxBatchBytes accepts up to the storage limit and no more", () => {
  assert.equal(
    loadBrokerConfig({ env: { CONCH_MAX_BATCH_BYTES: String(MAX_BATCH_BYTES_LIMIT) } }).maxBatchBytes,
    MAX_BATCH_BYTES_LIMIT,
  );
  assert.throws(
    () => loadBrokerConfig({ env: { CONCH_MAX_BATCH_BYTES: String(MAX_BATCH_BYTES_LIMIT + 1) } }),
    conchError(ErrorCode.INVALID_CONFIG),
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import type { AppendResult } from "../../src/storage/partition-log.js";
import { batchOf, conchError, openBroker, recordsOf } from "./helpers.js";

test("produce then fetch returns the records with their offsets", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 2);
  assert.deepEqual(await broker.produce("t", 1, batchOf(["a", "b", "c"]), "leader"), {
    baseOffset: 0,
    lastOffset: 2,
  });
  assert.deepEqual(await broker.produce("t", 1, batchOf(["d"]), "leader"), { baseOffset: 3, lastOffset: 3 });
  const r = await broker.fetch({
    topic: "t",
    partition: 1,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.equal(r.highWatermark, 4);
  assert.equal(r.logStartOffset, 0);
  assert.deepEqual(recordsOf(r.records), [
    [0, "a"],
    [1, "b"],
    [2, "c"],
    [3, "d"],
  ]);
  // From the middle of a batch: the batch comes whole, the reader skips what is below the offset.
  assert.deepEqual(
    recordsOf(
      (
        await broker.fetch({
          topic: "t",
          partition: 1,
          offset: 2,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
          minBytes: 1,
        })
      ).records,
      2,
    ),
    [
      [2, "c"],
      [3, "d"],
    ],
  );
  const empty = await broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.equal(empty.records.length, 0);
  assert.equal(empty.highWatermark, 0);
  await assert.rejects(
    broker.fetch({ topic: "t", partition: 1, offset: 5, maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 1 }),
    conchError(ErrorCode.OFFSET_OUT_OF_RANGE),
  );
  await assert.rejects(
    broker.fetch({ topic: "t", partition: 1, offset: -1, maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 1 }),
    conchError(ErrorCode.INVALID_REQUEST),
  );
  const d = broker.describeTopic("t").partitions;
  assert.deepEqual(d[1], { partition: 1, logStartOffset: 0, highWatermark: 4, quarantined: [] });
});

test("produce calls get offsets in call order, with no await between them", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const pending: Promise<AppendResult>[] = [];
  for (let i = 0; i < 40; i++)
    pending.push(broker.produce("t", 0, batchOf([`m${i}`, `n${i}`]), i % 2 === 0 ? "leader" : "durable"));
  const results = await Promise.all(pending);
  for (const [i, r] of results.entries()) assert.deepEqual(r, { baseOffset: 2 * i, lastOffset: 2 * i + 1 });
  const r = await broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.equal(recordsOf(r.records)[79]?.[1], "n39");
});

test("produce errors: bad acks, unknown topic or partition, invalid batch", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  await assert.rejects(
    broker.produce("t", 0, batchOf(["x"]), "some" as "leader"),
    conchError(ErrorCode.INVALID_REQUEST, /acks/),
  );
  await assert.rejects(
    broker.produce("nope", 0, batchOf(["x"]), "leader"),
    conchError(ErrorCode.UNKNOWN_TOPIC),
  );
  await assert.rejects(
    broker.produce("t", 1, batchOf(["x"]), "leader"),
    conchError(ErrorCode.UNKNOWN_PARTITION),
  );
  const corrupt = batchOf(["x"]);
  const last = corrupt.length - 1;
  corrupt.writeUInt8(corrupt.readUInt8(last) ^ 0xff, last);
  await assert.rejects(broker.produce("t", 0, corrupt, "leader"), conchError(ErrorCode.CORRUPT_BATCH));
  assert.equal(broker.describeTopic("t").partitions[0]?.highWatermark, 0);
});

test("acks=2 asks the log for a durable append; acks 0 and 1 do not", async (t) => {
  const { broker } = await openBroker(t, { flush: "none" });
  await broker.createTopic("t", 1);
  const log = broker.partition("t", 0);
  const durable: boolean[] = [];
  const appendTo = log.appendTo.bind(log);
  log.appendTo = (batches, isDurable, listener) => {
    durable.push(isDurable);
    appendTo(batches, isDurable, listener);
  };
  await broker.produce("t", 0, batchOf(["a"]), "none");
  await broker.produce("t", 0, batchOf(["b"]), "leader");
  assert.deepEqual(await broker.produce("t", 0, batchOf(["c"]), "durable"), { baseOffset: 2, lastOffset: 2 });
  assert.deepEqual(durable, [false, false, true]);
});

test("listOffsets: earliest, latest, by timestamp", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "latest" }), { found: true, offset: 0 });
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "timestamp", timestampMs: 0 }), {
    found: false,
    offset: 0,
  });
  await broker.produce("t", 0, batchOf(["a", "b"], 1_000), "leader");
  await broker.produce("t", 0, batchOf(["c"], 2_000), "leader");
  await broker.produce("t", 0, batchOf(["d"], 3_000), "leader");
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "earliest" }), { found: true, offset: 0 });
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "latest" }), { found: true, offset: 4 });
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "timestamp", timestampMs: 1_500 }), {
    found: true,
    offset: 2,
  });
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "timestamp", timestampMs: 3_000 }), {
    found: true,
    offset: 3,
  });
  assert.deepEqual(await broker.listOffsets("t", 0, { kind: "timestamp", timestampMs: 3_001 }), {
    found: false,
    offset: 4,
  });
  await assert.rejects(
    broker.listOffsets("t", 0, { kind: "next" } as never),
    conchError(ErrorCode.INVALID_REQUEST, /spec/),
  );
  await assert.rejects(
    broker.listOffsets("t", 1, { kind: "earliest" }),
    conchError(ErrorCode.UNKNOWN_PARTITION),
  );
  await assert.rejects(broker.listOffsets("u", 0, { kind: "earliest" }), conchError(ErrorCode.UNKNOWN_TOPIC));
});

test("autoCreateTopics: produce and fetch create an unknown topic, in call order", async (t) => {
  const { broker } = await openBroker(t, { autoCreateTopics: true, defaultPartitions: 2 });
  const pending = [0, 1, 2, 3].map((i) => broker.produce("fresh", 1, batchOf([`v${i}`]), "leader"));
  const results = await Promise.all(pending);
  assert.deepEqual(
    results.map((r) => r.baseOffset),
    [0, 1, 2, 3],
  );
  assert.equal(broker.describeTopic("fresh").partitions.length, 2);
  const r = await broker.fetch({
    topic: "polled",
    partition: 0,
    offset: 0,
    maxBytes: 1024,
    maxWaitMs: 0,
    minBytes: 1,
  });
  assert.equal(r.records.length, 0);
  assert.deepEqual(broker.listTopics(), ["fresh", "polled"]);
  await assert.rejects(
    broker.produce("fresh", 2, batchOf(["x"]), "leader"),
    conchError(ErrorCode.UNKNOWN_PARTITION),
  );
  await assert.rejects(
    broker.produce("../x", 0, batchOf(["x"]), "leader"),
    conchError(ErrorCode.INVALID_TOPIC_NAME),
  );
  await assert.rejects(
    broker.produce("__x", 0, batchOf(["x"]), "leader"),
    conchError(ErrorCode.INVALID_TOPIC_NAME),
  );
  assert.deepEqual(broker.listTopics(), ["fresh", "polled"]);
});

test("without autoCreateTopics an unknown topic stays unknown", async (t) => {
  const { broker } = await openBroker(t);
  await assert.rejects(broker.produce("x", 0, batchOf(["x"]), "leader"), conchError(ErrorCode.UNKNOWN_TOPIC));
  await assert.rejects(
    broker.fetch({ topic: "x", partition: 0, offset: 0, maxBytes: 1024, maxWaitMs: 0, minBytes: 1 }),
    conchError(ErrorCode.UNKNOWN_TOPIC),
  );
  assert.deepEqual(broker.listTopics(), []);
});

test('acks "all" on a single node is answered as "leader"; "durable" after the fsync', async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const all = await broker.produce("t", 0, batchOf(["a"]), "all");
  const durable = await broker.produce("t", 0, batchOf(["b"]), "durable");
  assert.deepEqual(
    [all, durable],
    [
      { baseOffset: 0, lastOffset: 0 },
      { baseOffset: 1, lastOffset: 1 },
    ],
  );
});

import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { abortListenerCount } from "../../src/broker/abort-fanout.js";
import { ErrorCode } from "../../src/format/errors.js";
import { batchOf, conchError, openBroker, recordsOf } from "./helpers.js";

// Waits long enough that a fetch which fails to wake would make its test fail on the data it
// returns, not on a clock: the tests assert what came back, never how long it took.
const LONG = 20_000;

/** Resolves once a fetch has begun waiting: it subscribes to its signal only then. */
async function waiting(signal: AbortSignal): Promise<void> {
  for (let i = 0; i < 1000 && abortListenerCount(signal) === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.equal(abortListenerCount(signal), 1, "the fetch is waiting");
}

test("a waiting fetch wakes when data arrives", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const signal = new AbortController().signal;
  const fetching = broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
    signal: signal,
  });
  await waiting(signal);
  await broker.produce("t", 0, batchOf(["hello"]), "leader");
  const r = await fetching;
  assert.deepEqual(recordsOf(r.records), [[0, "hello"]]);
  assert.equal(abortListenerCount(signal), 0, "the wait unsubscribed");
});

test("a waiting fetch times out with no records", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  await broker.produce("t", 0, batchOf(["old"]), "leader");
  const r = await broker.fetch({
    topic: "t",
    partition: 0,
    offset: 1,
    maxBytes: 1 << 20,
    maxWaitMs: 30,
    minBytes: 1,
  });
  assert.equal(r.records.length, 0);
  assert.equal(r.highWatermark, 1);
});

test("minBytes: the fetch keeps waiting until enough bytes are there", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const first = batchOf(["a"]);
  await broker.produce("t", 0, first, "leader");
  const minBytes = 3 * first.length;
  const signal = new AbortController().signal;
  const fetching = broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: minBytes,
    signal: signal,
  });
  await waiting(signal);
  let done = false;
  void fetching.then(() => {
    done = true;
  });
  await broker.produce("t", 0, batchOf(["b"]), "leader");
  // Give the fetch every chance to (wrongly) answer with two batches.
  await broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 20,
    minBytes: 1 << 20,
  });
  assert.equal(done, false, "two batches are fewer than minBytes");
  await broker.produce("t", 0, batchOf(["c"]), "leader");
  const r = await fetching;
  assert.ok(r.records.length >= minBytes);
  assert.deepEqual(
    recordsOf(r.records).map(([, v]) => v),
    ["a", "b", "c"],
  );
});

test("abort ends the wait, resolves empty and unsubscribes it", async (t) => {
  const { broker } = await openBroker(t);
  const topic = await broker.ensureInternalTopic("__polled", 1);
  const controller = new AbortController();
  const fetching = broker.fetch({
    topic: "__polled",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
    signal: controller.signal,
  });
  await waiting(controller.signal);
  assert.equal(topic.partition(0).waitingReaders, 1, "the fetch is waiting");
  // The topic's close reaches waits through its logs: they do not subscribe to its signal.
  assert.equal(abortListenerCount(topic.closedSignal), 0);
  controller.abort();
  const r = await fetching;
  assert.equal(r.records.length, 0);
  assert.equal(abortListenerCount(controller.signal), 0);
  assert.equal(getEventListeners(controller.signal, "abort").length, 0);
  assert.equal(topic.partition(0).waitingReaders, 0, "the wait left the log");
  assert.equal(getEventListeners(topic.closedSignal, "abort").length, 0);
  // An already aborted signal does not wait at all.
  const r2 = await broker.fetch({
    topic: "__polled",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
    signal: AbortSignal.abort(),
  });
  assert.equal(r2.records.length, 0);
  // The log still works for waiters after all that.
  const again = broker.fetch({
    topic: "__polled",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
  });
  await topic.partition(0).append(batchOf(["after"]));
  assert.deepEqual(recordsOf((await again).records), [[0, "after"]]);
});

test("deleting a topic fails its waiting fetches with UNKNOWN_TOPIC", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const signal = new AbortController().signal;
  const fetching = broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
    signal: signal,
  });
  await waiting(signal);
  const outcome = assert.rejects(fetching, conchError(ErrorCode.UNKNOWN_TOPIC, /deleted/));
  await broker.deleteTopic("t");
  await outcome;
});

test("closing the broker fails waiting fetches with SHUTTING_DOWN", async (t) => {
  const { broker } = await openBroker(t);
  await broker.createTopic("t", 1);
  const signal = new AbortController().signal;
  const fetching = broker.fetch({
    topic: "t",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: LONG,
    minBytes: 1,
    signal: signal,
  });
  await waiting(signal);
  const outcome = assert.rejects(fetching, conchError(ErrorCode.SHUTTING_DOWN));
  await broker.close();
  await outcome;
});

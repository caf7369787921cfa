import assert from "node:assert/strict";
import { test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { Consumer, ConsumerMessage } from "../../src/client/consumer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { RealBroker } from "./real-broker.js";

async function client(t: import("node:test").TestContext, config = {}) {
  const rb = await RealBroker.start(t, config);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  return { rb, conch, admin: conch.admin() };
}

/** The next `n` messages of a consumer's iterator. */
async function take(consumer: Consumer, n: number): Promise<ConsumerMessage[]> {
  const out: ConsumerMessage[] = [];
  if (n === 0) return out;
  for await (const m of consumer) {
    out.push(m);
    if (out.length === n) break;
  }
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ConchError, String(err));
    return err.codeName;
  }
  return "resolved";
}

test("several producers and consumers at once: every consumer gets every message, in key order", {
  timeout: 60_000,
}, async (t) => {
  const { conch, admin } = await client(t);
  await admin.createTopic("shared", { partitions: 3 });
  const PER_PRODUCER = 20_000;
  const PRODUCERS = 3;
  const consumers = [conch.consumer({ topics: ["shared"] }), conch.consumer({ topics: ["shared"] })];

  // Consumers start first and long-poll while the producers run.
  const total = PER_PRODUCER * PRODUCERS;
  const viaMessages = (async () => {
    const got: string[] = [];
    for await (const m of consumers[0]!) {
      got.push(`${m.key?.toString()}|${m.value.toString()}`);
      if (got.length === total) break;
    }
    return got;
  })();
  const viaBatches = (async () => {
    const got: string[] = [];
    for await (const b of consumers[1]!.batches()) {
      const c = b.cursor();
      while (c.next()) got.push(`${c.key()?.toString()}|${c.value().toString()}`);
      if (got.length >= total) break;
    }
    return got;
  })();

  const producing = Array.from({ length: PRODUCERS }, async (_, p) => {
    const producer = conch.producer({ lingerMs: 2 });
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < PER_PRODUCER; i++) {
      const message = { key: `p${p}-k${i % 10}`, value: String(i) };
      sends.push(producer.send("shared", message));
      if (sends.length === 2000) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    await producer.close();
  });
  await Promise.all(producing);

  for (const got of await Promise.all([viaMessages, viaBatches])) {
    assert.equal(got.length, total);
    assert.equal(new Set(got).size, total, "no duplicates");
    const last = new Map<string, number>();
    for (const entry of got) {
      const [key, value] = entry.split("|") as [string, string];
      const seq = Number(value);
      assert.ok(seq > (last.get(key) ?? -1), `${key}: ${seq} after ${last.get(key)}`);
      last.set(key, seq);
    }
    assert.equal(last.size, PRODUCERS * 10);
  }
});

test("a long-polling consumer wakes when data arrives", { timeout: 20_000 }, async (t) => {
  const rb = await RealBroker.start(t);
  // The poll may last a minute and the test only 20 s: it passes only if the poll is woken.
  const conch = new Conch({ brokers: [rb.address], requestTimeoutMs: 120_000 });
  t.after(() => conch.close());
  await conch.admin().createTopic("quiet");
  const consumer = conch.consumer({ topics: ["quiet"], maxWaitMs: 60_000, from: "latest" });
  const first = take(consumer, 1);
  await consumer.start();
  await new Promise((resolve) => setTimeout(resolve, 200)); // let the poll park at the broker
  const producer = conch.producer();
  const sent = await producer.send("quiet", { key: "k", value: "wake up", timestamp: 1_700_000_000_123 });
  const [m] = await first;
  assert.deepEqual(
    { ...m, key: m!.key?.toString(), value: m!.value.toString() },
    {
      topic: "quiet",
      partition: 0,
      offset: sent.offset,
      key: "k",
      value: "wake up",
      valueIsNull: false,
      timestamp: 1_700_000_000_123,
    },
  );
});

test("start positions: earliest, latest, an offset inside a batch, a timestamp", {
  timeout: 60_000,
}, async (t) => {
  const { conch, admin } = await client(t);
  await admin.createTopic("pos");
  const producer = conch.producer();
  // One sendBatch in one tick: one stored batch of ten records.
  const messages = Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, timestamp: 1000 + i * 10 }));
  const r = await producer.sendBatch("pos", messages);
  assert.deepEqual([...r.offsets], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

  const offsets = async (from: import("../../src/client/consumer.js").StartPosition, n: number) => {
    const c = conch.consumer({ partitions: [{ topic: "pos", partition: 0, from }] });
    const got = await take(c, n);
    await c.close();
    return got.map((m) => m.offset);
  };
  assert.deepEqual(await offsets("earliest", 3), [0, 1, 2]);
  assert.deepEqual(await offsets({ offset: 5 }, 5), [5, 6, 7, 8, 9], "records below the offset are skipped");
  assert.deepEqual(await offsets({ timestamp: 1041 }, 2), [5, 6]);

  const latest = conch.consumer({ partitions: [{ topic: "pos", partition: 0, from: "latest" }] });
  const next = take(latest, 1);
  await latest.start();
  await producer.send("pos", { value: "after" });
  assert.deepEqual(
    (await next).map((m) => [m.offset, m.value.toString()]),
    [[10, "after"]],
  );
  assert.equal(latest.position("pos", 0), 11);

  // Batch API: the cursor skips the records before fromOffset too.
  const c = conch.consumer({ partitions: [{ topic: "pos", partition: 0, from: { offset: 8 } }] });
  let handledTo = -1;
  for await (const b of c.batches()) {
    assert.equal(b.fromOffset, 8);
    const cur = b.cursor();
    const seen: number[] = [];
    while (cur.next()) seen.push(cur.offset);
    assert.deepEqual(seen, [8, 9, 10]);
    assert.equal(b.nextOffset, 11);
    assert.equal(c.position("pos", 0), 8, "a batch counts as handled only when the next is asked for");
    handledTo = b.nextOffset;
    break;
  }
  assert.equal(c.position("pos", 0), handledTo, "leaving the loop marks the batch handled");
  await c.close();
});

test("assign and seek: partitions come and go, seek re-reads", { timeout: 60_000 }, async (t) => {
  const { conch, admin } = await client(t);
  await admin.createTopic("ab", { partitions: 2 });
  const producer = conch.producer();
  await producer.sendBatch("ab", [
    { value: "a0", partition: 0 },
    { value: "a1", partition: 0 },
    { value: "b0", partition: 1 },
  ]);
  const consumer = conch.consumer({ partitions: [{ topic: "ab", partition: 0 }] });
  assert.deepEqual(
    (await take(consumer, 2)).map((m) => m.value.toString()),
    ["a0", "a1"],
  );
  assert.deepEqual(consumer.positions(), [{ topic: "ab", partition: 0, offset: 2 }]);
  consumer.assign([
    { topic: "ab", partition: 0 },
    { topic: "ab", partition: 1, from: "earliest" },
  ]);
  assert.deepEqual(
    (await take(consumer, 1)).map((m) => m.value.toString()),
    ["b0"],
    "partition 0 kept its position; partition 1 started at its beginning",
  );
  consumer.seek("ab", 0, { offset: 1 });
  assert.deepEqual(
    (await take(consumer, 1)).map((m) => m.value.toString()),
    ["a1"],
  );
  consumer.assign([{ topic: "ab", partition: 1 }]);
  assert.deepEqual(consumer.assignment(), [{ topic: "ab", partition: 1 }]);
  assert.equal(consumer.position("ab", 1), 1);
  assert.throws(
    () => consumer.seek("ab", 0, "earliest"),
    (e: ConchError) => e.code === ErrorCode.INVALID_REQUEST,
  );
  await consumer.close();
});

test("out-of-range positions follow the reset policy", { timeout: 60_000 }, async (t) => {
  const { conch, admin } = await client(t);
  await admin.createTopic("oor");
  const producer = conch.producer();
  await producer.sendBatch("oor", [{ value: "x0" }, { value: "x1" }]);

  const strict = conch.consumer({
    partitions: [{ topic: "oor", partition: 0, from: { offset: 50 } }],
    resetPolicy: "error",
  });
  assert.equal(await codeOf(take(strict, 1)), "OFFSET_OUT_OF_RANGE");
  await strict.close();

  // Past the end with "earliest": the consumer goes to the end, never back to the start.
  const lenient = conch.consumer({ partitions: [{ topic: "oor", partition: 0, from: { offset: 50 } }] });
  const next = take(lenient, 1);
  await lenient.start();
  assert.equal(lenient.position("oor", 0), 50);
  while (lenient.position("oor", 0) !== 2) await new Promise((resolve) => setTimeout(resolve, 5));
  await producer.send("oor", { value: "x2" });
  assert.deepEqual(
    (await next).map((m) => m.value.toString()),
    ["x2"],
  );
  await lenient.close();
});

test("consumer errors and cancellation: unknown topics, abort signals, close ends iteration", {
  timeout: 60_000,
}, async (t) => {
  const { conch } = await client(t);
  const unknown = conch.consumer({ partitions: [{ topic: "missing", partition: 0 }] });
  assert.equal(await codeOf(take(unknown, 1)), "UNKNOWN_TOPIC");
  await unknown.close();
  assert.equal(await codeOf(take(conch.consumer({ topics: ["missing"] }), 1)), "UNKNOWN_TOPIC");

  await conch.admin().createTopic("idle");
  const ac = new AbortController();
  const aborted = conch.consumer({ topics: ["idle"], signal: ac.signal });
  const waiting = take(aborted, 1);
  await aborted.start();
  ac.abort();
  assert.equal(await codeOf(waiting), "ABORTED");
  assert.ok(aborted.closed);

  // A per-iteration signal ends only that wait; the consumer stays open and can go on.
  const patient = conch.consumer({ topics: ["idle"] });
  const ac2 = new AbortController();
  const it = patient.messages({ signal: ac2.signal });
  const pending = it.next();
  await patient.start();
  ac2.abort();
  assert.equal(await codeOf(pending), "ABORTED");
  assert.equal(patient.closed, false);
  await conch.producer().send("idle", { value: "still here" });
  assert.deepEqual(
    (await take(patient, 1)).map((m) => m.value.toString()),
    ["still here"],
  );
  await patient.close();

  const closing = conch.consumer({ topics: ["idle"] });
  const ended = take(closing, 1);
  await closing.start();
  await closing.close();
  assert.deepEqual(await ended, [], "close ends a waiting iteration");
});

test("admin: create, list, describe, alter, list offsets, delete, and their errors", {
  timeout: 60_000,
}, async (t) => {
  const { conch, admin } = await client(t);
  await admin.createTopic("orders", { partitions: 2, configs: { "retention.ms": "3600000" } });
  await admin.createTopic("audit");
  assert.deepEqual((await admin.listTopics()).sort(), ["audit", "orders"]);
  const d = await admin.describeTopic("orders");
  assert.equal(d.partitions.length, 2);
  assert.equal(d.configs["retention.ms"], "3600000");
  await admin.alterTopic("orders", { "retention.ms": "7200000" });
  assert.equal((await admin.describeTopic("orders")).configs["retention.ms"], "7200000");

  await conch.producer().sendBatch("orders", [
    { value: "o1", partition: 1, timestamp: 5000 },
    { value: "o2", partition: 1, timestamp: 6000 },
  ]);
  assert.deepEqual(await admin.listOffsets("orders", 1, "earliest"), { found: true, offset: 0 });
  assert.deepEqual(await admin.listOffsets("orders", 1, "latest"), { found: true, offset: 2 });
  assert.deepEqual(await admin.listOffsets("orders", 1, { timestamp: 5500 }), { found: true, offset: 1 });
  assert.equal((await admin.listOffsets("orders", 1, { timestamp: 9000 })).found, false);

  assert.equal(await codeOf(admin.createTopic("orders")), "TOPIC_ALREADY_EXISTS");
  assert.equal(await codeOf(admin.createTopic("bad/name")), "INVALID_TOPIC_NAME");
  assert.equal(await codeOf(admin.createTopic("zero", { partitions: 0 })), "INVALID_PARTITIONS");
  assert.equal(await codeOf(admin.alterTopic("orders", { "no.such": "1" })), "INVALID_CONFIG");
  await admin.deleteTopic("audit");
  assert.deepEqual(await admin.listTopics(), ["orders"]);
  assert.equal(await codeOf(admin.describeTopic("audit")), "UNKNOWN_TOPIC");
  assert.equal(await codeOf(admin.deleteTopic("audit")), "UNKNOWN_TOPIC");
});

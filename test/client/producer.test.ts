import assert from "node:assert/strict";
import { test } from "node:test";
import { partitionForKey } from "../../src/client/partitioner.js";
import { Producer, type RecordMetadata } from "../../src/client/producer.js";
import { batchCount } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { ApiKey } from "../../src/protocol/api.js";
import {
  decodeProduceRequest,
  encodeProduceResponse,
  type ProduceRequest,
} from "../../src/protocol/produce.js";
import { FakeBroker, type FakeRequest } from "./fake-broker.js";

/** A fake that stores produce requests per partition and answers them when told. */
class FakeLog {
  next = new Map<number, number>();
  held: Array<{ req: FakeRequest; produce: ProduceRequest }> = [];
  partitions = 1;
  values: string[][] = [];
  auto = true;

  handle = (req: FakeRequest): void => {
    if (req.apiKey === ApiKey.DESCRIBE_TOPIC) {
      req.conn.describeTopic(req, this.partitions);
      return;
    }
    if (req.apiKey !== ApiKey.PRODUCE) return;
    const produce = decodeProduceRequest(req.frame);
    this.held.push({ req, produce });
    if (this.auto) this.release();
  };

  /** Stores and acknowledges every held request. */
  release(): void {
    for (const { req, produce } of this.held.splice(0)) {
      const base = this.next.get(produce.partition) ?? 0;
      const n = batchCount(produce.records, 0);
      this.next.set(produce.partition, base + n);
      const c = new RecordCursor(produce.records);
      const vs = (this.values[produce.partition] ??= []);
      while (c.next()) vs.push(c.value().toString());
      if (produce.acks !== 0) {
        req.conn.socket.write(
          encodeProduceResponse(req.correlationId, { baseOffset: base, lastOffset: base + n - 1 }),
        );
      }
    }
  }
}

async function setup(t: import("node:test").TestContext, log = new FakeLog()) {
  const fake = await FakeBroker.start(t, log.handle);
  return { fake, log, brokers: [fake.address] };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

test("sends resolve with their offsets, in order, batched per partition", async (t) => {
  const { brokers, log, fake } = await setup(t);
  const producer = new Producer({ brokers });
  t.after(() => producer.close());
  const sends: Array<Promise<RecordMetadata>> = [];
  for (let i = 0; i < 100; i++) sends.push(producer.send("t", { value: `m${i}`, partition: 0 }));
  const results = await Promise.all(sends);
  assert.deepEqual(
    results.map((r) => r.offset),
    Array.from({ length: 100 }, (_, i) => i),
  );
  assert.equal(fake.requests.filter((r) => r.apiKey === ApiKey.PRODUCE).length, 1, "one tick, one batch");
  assert.deepEqual(log.values[0]?.slice(0, 3), ["m0", "m1", "m2"]);
});

test("a full buffer makes sends wait until acknowledgements free memory", async (t) => {
  const log = new FakeLog();
  log.auto = false;
  const { brokers, fake } = await setup(t, log);
  const producer = new Producer({ brokers }, { bufferBytes: 4096, batchBytes: 1024, maxInFlight: 100 });
  t.after(() => producer.close());
  const value = "v".repeat(71); // 100 bytes per record with its header
  let resolved = 0;
  const sends: Array<Promise<RecordMetadata>> = [];
  // 7,000 bytes: a buffer full, and less than another waiting for it (past that, BUFFER_FULL).
  const count = 70;
  for (let i = 0; i < count; i++) {
    sends.push(
      producer.send("t", { value, partition: 0 }).then((r) => {
        resolved++;
        return r;
      }),
    );
  }
  await fake.waitForRequests(1);
  await settle();
  assert.ok(producer.bufferedBytes <= 4096, `buffered ${producer.bufferedBytes}`);
  assert.equal(producer.hasRoom, false);
  assert.equal(resolved, 0);
  const sentBefore = log.held.reduce((n, h) => n + batchCount(h.produce.records, 0), 0);
  assert.ok(sentBefore > 0 && sentBefore < count, `${sentBefore} records on the wire while memory is full`);
  const room = producer.waitForRoom();
  // Acknowledge repeatedly: each acknowledgement lets parked sends in.
  while (resolved < count) {
    log.release();
    await settle();
  }
  await room;
  const results = await Promise.all(sends);
  assert.deepEqual(
    results.map((r) => r.offset),
    Array.from({ length: count }, (_, i) => i),
  );
  assert.equal(producer.bufferedBytes, 0);
  assert.equal(producer.hasRoom, true);
});

test("keyed messages land on the murmur2 partition; keyless ones spread by batch", async (t) => {
  const log = new FakeLog();
  log.partitions = 4;
  const { brokers } = await setup(t, log);
  const producer = new Producer({ brokers }, { batchBytes: 1024 });
  t.after(() => producer.close());
  for (const key of ["a", "b", "user-17", "zzz"]) {
    const r = await producer.send("t", { key, value: "x" });
    assert.equal(r.partition, partitionForKey(key, 4));
  }
  const value = "y".repeat(200);
  const results = await Promise.all(Array.from({ length: 40 }, () => producer.send("t", { value })));
  const used = new Set(results.map((r) => r.partition));
  assert.equal(used.size, 4, "full batches move the sticky partition on");
  // Messages of one batch share a partition: runs, not a shuffle.
  let switches = 0;
  for (let i = 1; i < results.length; i++)
    if (results[i]!.partition !== results[i - 1]!.partition) switches++;
  assert.ok(switches < 20, `${switches} partition switches`);
});

test("sendBatch resolves partitions and offsets of every message", async (t) => {
  const log = new FakeLog();
  log.partitions = 3;
  const { brokers } = await setup(t, log);
  const producer = new Producer({ brokers });
  t.after(() => producer.close());
  const messages = Array.from({ length: 30 }, (_, i) => ({ key: `k${i % 5}`, value: `v${i}` }));
  const r = await producer.sendBatch("t", messages);
  for (let i = 0; i < 30; i++) {
    const p = r.partitions[i]!;
    assert.equal(p, partitionForKey(`k${i % 5}`, 3));
    assert.equal(log.values[p]![r.offsets[i]!], `v${i}`);
  }
  const empty = await producer.sendBatch("t", []);
  assert.equal(empty.offsets.length, 0);
});

test("a dropped connection makes the producer resend (at-least-once)", async (t) => {
  const log = new FakeLog();
  let dropped = false;
  const fake = await FakeBroker.start(t, (req) => {
    if (req.apiKey === ApiKey.PRODUCE && !dropped) {
      dropped = true;
      req.conn.socket.destroy();
      return;
    }
    log.handle(req);
  });
  const producer = new Producer({ brokers: [fake.address], reconnectBackoffMs: 5 }, { retryBackoffMs: 5 });
  t.after(() => producer.close());
  const r = await Promise.all([
    producer.send("t", { value: "a", partition: 0 }),
    producer.send("t", { value: "b", partition: 0 }),
  ]);
  assert.deepEqual(
    r.map((x) => x.offset),
    [0, 1],
  );
  assert.equal(fake.connections.length, 2);
  assert.deepEqual(log.values[0], ["a", "b"]);
});

test("acks none resolves once written, with offset -1", async (t) => {
  const { brokers, log, fake } = await setup(t);
  const producer = new Producer({ brokers }, { acks: "none" });
  t.after(() => producer.close());
  const r = await producer.send("t", { value: "fire", partition: 0 });
  assert.deepEqual(r, { partition: 0, offset: -1 });
  await producer.flush();
  await fake.waitForRequests(1);
  assert.deepEqual(log.values[0], ["fire"]);
});

test("errors: non-retriable broker errors, invalid messages and oversized records reject their sends", async (t) => {
  const fake = await FakeBroker.start(t, (req) => {
    if (req.apiKey === ApiKey.PRODUCE)
      req.conn.error(req.correlationId, ErrorCode.UNKNOWN_PARTITION, "no partition 9");
    if (req.apiKey === ApiKey.DESCRIBE_TOPIC)
      req.conn.error(req.correlationId, ErrorCode.UNKNOWN_TOPIC, "no topic");
  });
  const producer = new Producer({ brokers: [fake.address] }, { batchBytes: 1024 });
  t.after(() => producer.close());
  assert.equal(await codeOf(producer.send("t", { value: "x", partition: 9 })), "UNKNOWN_PARTITION");
  assert.equal(await codeOf(producer.send("nope", { value: "x" })), "UNKNOWN_TOPIC");
  assert.equal(
    await codeOf(producer.send("t", { value: 42 as unknown as string, partition: 0 })),
    "INVALID_REQUEST",
  );
  assert.equal(
    await codeOf(producer.send("t", { value: "x", partition: 0, timestamp: -1 })),
    "INVALID_REQUEST",
  );
  assert.equal(
    await codeOf(producer.send("t", { value: Buffer.alloc(5 << 20), partition: 0 })),
    "BATCH_TOO_LARGE",
  );
  await producer.close();
  assert.equal(await codeOf(producer.send("t", { value: "late", partition: 0 })), "ABORTED");
});

test("flush waits for everything sent before it; close flushes", async (t) => {
  const log = new FakeLog();
  log.auto = false;
  const { brokers, fake } = await setup(t, log);
  const producer = new Producer({ brokers }, { lingerMs: 10_000 });
  let done = 0;
  for (let i = 0; i < 10; i++)
    void producer.send("t", { value: `f${i}`, partition: i % 2 }).then(() => done++);
  let flushed = false;
  const flushing = producer.flush().then(() => {
    flushed = true;
  });
  await fake.waitForRequests(2);
  await settle();
  assert.equal(flushed, false);
  assert.equal(log.held.length, 2, "flush sealed both partitions' batches despite the linger");
  assert.equal(await codeOf(producer.flush(AbortSignal.abort())), "ABORTED", "a flush wait can be abandoned");
  log.auto = true;
  log.release();
  await flushing;
  assert.equal(done, 10);
  void producer.send("t", { value: "last", partition: 0 });
  await producer.close();
  assert.deepEqual(log.values[0]?.at(-1), "last");
});

/** The code name a call failed with, or "resolved". */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ConchError);
    return err.codeName;
  }
  return "resolved";
}

test("send({ signal }): a send waiting for memory is withdrawn with ABORTED; one already in a batch is not", async (t) => {
  const log = new FakeLog();
  log.auto = false;
  const { brokers } = await setup(t, log);
  const producer = new Producer({ brokers }, { bufferBytes: 4096, batchBytes: 1024, maxInFlight: 100 });
  t.after(() => producer.close());
  const value = "v".repeat(71); // 100 bytes per record with its header
  const inBatch = new AbortController();
  const first = producer.send("t", { value: "first", partition: 0 }, { signal: inBatch.signal });
  const sends: Array<Promise<RecordMetadata>> = [first];
  for (let i = 0; i < 39; i++) sends.push(producer.send("t", { value, partition: 0 }));
  await settle();
  assert.equal(producer.hasRoom, false);
  const parked = new AbortController();
  const withdrawn = producer.send("t", { value: "withdrawn", partition: 0 }, { signal: parked.signal });
  const group = new AbortController();
  const withdrawnBatch = producer.sendBatch(
    "t",
    [
      { value: "batch-a", partition: 0 },
      { value: "batch-b", partition: 0 },
    ],
    { signal: group.signal },
  );
  const behind = producer.send("t", { value: "behind", partition: 0 });
  parked.abort();
  group.abort();
  inBatch.abort();
  await assert.rejects(
    withdrawn,
    (err: unknown) => err instanceof ConchError && err.code === ErrorCode.ABORTED,
  );
  await assert.rejects(
    withdrawnBatch,
    (err: unknown) => err instanceof ConchError && err.code === ErrorCode.ABORTED,
  );
  await assert.rejects(
    producer.send("t", { value: "late" }, { signal: AbortSignal.abort() }),
    (err: unknown) => err instanceof ConchError && err.code === ErrorCode.ABORTED,
  );
  let released = false;
  void behind.then(() => {
    released = true;
  });
  while (!released) {
    log.release();
    await settle();
  }
  await Promise.all(sends);
  assert.equal((await first).offset, 0, "a send already in a batch completes");
  const stored = log.values[0] ?? [];
  assert.equal(stored.length, 41);
  assert.equal(stored.at(-1), "behind");
  for (const v of ["withdrawn", "batch-a", "batch-b", "late"])
    assert.ok(!stored.includes(v), `${v} was not sent`);
});

test("sends waiting for memory are bounded by bufferBytes: past it send and sendBatch fail at once with BUFFER_FULL", async (t) => {
  const log = new FakeLog();
  log.auto = false;
  const { brokers } = await setup(t, log);
  const producer = new Producer({ brokers }, { bufferBytes: 4096, batchBytes: 1024, maxInFlight: 100 });
  t.after(() => producer.close());
  const value = "v".repeat(71); // 100 bytes per record with its header
  const big = "w".repeat(900);
  const sends: Array<Promise<RecordMetadata>> = [];
  // About 40 in the buffer, 35 waiting for it.
  for (let i = 0; i < 75; i++) sends.push(producer.send("t", { value, partition: 0 }));
  await settle();
  const full = (err: unknown): boolean =>
    err instanceof ConchError &&
    err.code === ErrorCode.BUFFER_FULL &&
    err.retriable &&
    /bufferBytes/.test(err.message);
  await assert.rejects(producer.send("t", { value: big, partition: 0 }), full);
  await assert.rejects(
    producer.sendBatch("t", [
      { value: "b0", partition: 0 },
      { value: big, partition: 0 },
      { value: "b2", partition: 0 },
    ]),
    full,
  );
  let done = 0;
  for (const s of sends) void s.then(() => done++);
  while (done < 75) {
    log.release();
    await settle();
  }
  const stored = log.values[0] ?? [];
  assert.equal(stored.length, 75);
  for (const v of [big, "b0", "b2"]) assert.ok(!stored.includes(v), `${v} was not sent`);
});

test("connect() connects and learns partition counts ahead of the first send, once per topic", async (t) => {
  const log = new FakeLog();
  log.partitions = 3;
  const { brokers, fake } = await setup(t, log);
  const producer = new Producer({ brokers });
  t.after(() => producer.close());
  const describes = () => fake.requests.filter((r) => r.apiKey === ApiKey.DESCRIBE_TOPIC).length;
  await Promise.all([producer.connect(["t"]), producer.connect(["t"])]);
  assert.equal(fake.connections.length, 1);
  assert.equal(describes(), 1, "two connects share one lookup");
  assert.equal(fake.requests.filter((r) => r.apiKey === ApiKey.PRODUCE).length, 0);
  // A keyless send needs the count: it is placed without another lookup.
  const r = await producer.send("t", { value: "v" });
  assert.ok(r.partition >= 0 && r.partition < 3);
  await producer.connect(["t"]);
  assert.equal(describes(), 1);
  assert.equal(fake.connections.length, 1);
});

test("connect() rejects for an unknown topic, an aborted signal, and a closed producer", async (t) => {
  const fake = await FakeBroker.start(t, (req) => {
    if (req.apiKey === ApiKey.DESCRIBE_TOPIC)
      req.conn.error(req.correlationId, ErrorCode.UNKNOWN_TOPIC, "no such topic");
  });
  const producer = new Producer({ brokers: [fake.address] });
  await assert.rejects(producer.connect(["missing"]), (e: ConchError) => e.code === ErrorCode.UNKNOWN_TOPIC);
  // The failure is not cached: the next connect asks again.
  await assert.rejects(producer.connect(["missing"]), (e: ConchError) => e.code === ErrorCode.UNKNOWN_TOPIC);
  assert.equal(fake.requests.filter((r) => r.apiKey === ApiKey.DESCRIBE_TOPIC).length, 2);
  await assert.rejects(
    producer.connect([], AbortSignal.abort()),
    (e: ConchError) => e.code === ErrorCode.ABORTED,
  );
  await producer.close();
  await assert.rejects(producer.connect(), (e: ConchError) => e.code === ErrorCode.ABORTED);
});

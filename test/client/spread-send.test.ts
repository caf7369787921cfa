/**
 * Keyed sends spread thin over many partitions go as one Produce version 3 request (a partitioned
 * batch) per leader: every record lands where the call's result says, in order within its
 * partition beside ordinary sends, sent again the ordinary way after a retriable failure, and in
 * version 2 requests to a broker that agrees only to protocol version 2.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { partitionForKey } from "../../src/client/partitioner.js";
import { Producer } from "../../src/client/producer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { requestApiVersion } from "../../src/protocol/frame.js";
import { decodeHandshakeRequest, encodeHandshakeResponse } from "../../src/protocol/handshake.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry, HandlerTable } from "../../src/server/handler.js";
import { fetchAll, recordsOf, startServer } from "../server/helpers.js";

interface Counts {
  table: HandlerTable;
  byVersion: number[];
  /** Fail this many version 3 requests whole with NOT_LEADER before serving any. */
  failV3: number;
}

/** The default handlers, counting produce requests by version; `maxVersion` caps the handshake. */
function countingHandlers(maxVersion = 3): Counts {
  const table: Array<HandlerEntry | undefined> = [...defaultHandlers()];
  const produce = table[ApiKey.PRODUCE]!;
  const out: Counts = { table: table as HandlerTable, byVersion: [0, 0, 0, 0], failV3: 0 };
  table[ApiKey.PRODUCE] = {
    ...produce,
    handle: (ctx, frame, id) => {
      const version = requestApiVersion(frame);
      out.byVersion[version]!++;
      if (version === 3 && out.failV3 > 0) {
        out.failV3--;
        throw new ConchError(ErrorCode.NOT_LEADER, "the leader moved (scripted)");
      }
      return produce.handle(ctx, frame, id);
    },
  };
  if (maxVersion < 3) {
    table[ApiKey.HANDSHAKE] = {
      version: 1,
      handle: (ctx, frame, id) => {
        const req = decodeHandshakeRequest(frame);
        ctx.clientId = req.clientId;
        return encodeHandshakeResponse(id, {
          version: Math.min(req.maxVersion, maxVersion),
          maxFrameBytes: ctx.limits.maxFrameBytes,
          maxBatchBytes: ctx.limits.maxBatchBytes,
        });
      },
    };
  }
  return out;
}

function keyed(n: number, from = 0): { key: string; value: string }[] {
  return Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` }));
}

/** What each partition holds, as [offset, value] lists. */
async function stored(f: Awaited<ReturnType<typeof startServer>>, topic: string, partitions: number) {
  const c = await f.client();
  const out: Array<Array<[number, string]>> = [];
  for (let p = 0; p < partitions; p++) out.push(recordsOf((await fetchAll(c, p, topic)).records));
  return out;
}

test("a keyed send over many partitions is one version 3 request, each record where the result says", async (t) => {
  const counts = countingHandlers();
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 256);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  await producer.connect(["wide"]);
  const messages = keyed(512);
  const res = await producer.sendBatch("wide", messages);
  assert.deepEqual(counts.byVersion, [0, 0, 0, 1]);
  assert.equal(producer.bufferedBytes, 0);
  const held = await stored(f, "wide", 256);
  messages.forEach((m, i) => {
    const p = res.partitions[i]!;
    assert.equal(p, partitionForKey(m.key, 256), `message ${i}'s partition`);
    const at = held[p]!.find(([offset]) => offset === res.offsets[i]);
    assert.deepEqual(at, [res.offsets[i], m.value], `message ${i}`);
  });
  assert.equal(
    held.reduce((n, records) => n + records.length, 0),
    512,
  );
});

test("within a partition, spread and ordinary sends keep the order they were made in", async (t) => {
  const counts = countingHandlers();
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 64);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  await producer.connect(["wide"]);
  const sent: Promise<unknown>[] = [];
  const order = new Map<number, string[]>();
  const note = (key: string, value: string) => {
    const p = partitionForKey(key, 64);
    const list = order.get(p) ?? [];
    list.push(value);
    order.set(p, list);
  };
  let seq = 0;
  for (let round = 0; round < 12; round++) {
    // An ordinary send to one key, then (once it is on its way) a spread send over every key, then
    // another ordinary send made before the spread one leaves.
    const one = { key: `k${round % 7}`, value: `s${seq++}` };
    note(one.key, one.value);
    sent.push(producer.send("wide", one));
    if (round % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
    const many = keyed(128).map((m) => ({ key: m.key, value: `s${seq++}` }));
    for (const m of many) note(m.key, m.value);
    sent.push(producer.sendBatch("wide", many));
    const two = { key: `k${round % 5}`, value: `s${seq++}` };
    note(two.key, two.value);
    sent.push(producer.send("wide", two));
  }
  await Promise.all(sent);
  assert.ok(counts.byVersion[3]! > 0, "some sends went as version 3");
  const held = await stored(f, "wide", 64);
  for (let p = 0; p < 64; p++) {
    assert.deepEqual(
      held[p]!.map(([, v]) => v),
      order.get(p) ?? [],
      `partition ${p}`,
    );
  }
});

test("a version 3 request that fails retriably is sent again the ordinary way, nothing lost or doubled", async (t) => {
  const counts = countingHandlers();
  counts.failV3 = 1;
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 128);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] }, { retryBackoffMs: 1 });
  t.after(() => producer.close());
  await producer.connect(["wide"]);
  const messages = keyed(256);
  const res = await producer.sendBatch("wide", messages);
  assert.equal(counts.byVersion[3], 1);
  assert.ok(counts.byVersion[1]! + counts.byVersion[2]! > 0);
  const held = await stored(f, "wide", 128);
  assert.equal(
    held.reduce((n, records) => n + records.length, 0),
    256,
  );
  messages.forEach((m, i) => {
    const at = held[res.partitions[i]!]!.find(([offset]) => offset === res.offsets[i]);
    assert.deepEqual(at, [res.offsets[i], m.value], `message ${i}`);
  });
});

test("a record for a partition the topic does not have fails the call as the ordinary path does", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("wide", 64);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  await producer.connect(["wide"]);
  // A partition past the count the producer knows goes the ordinary way, which refuses it.
  const messages = [...keyed(127), { value: "x", partition: 64 }];
  await assert.rejects(producer.sendBatch("wide", messages), (e: unknown) => e instanceof ConchError);
});

test("flush waits for spread sends, and a broker at protocol version 2 gets version 2 requests", async (t) => {
  const counts = countingHandlers(2);
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 256);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  await producer.connect(["wide"]);
  let done = false;
  void producer.sendBatch("wide", keyed(512)).then(() => {
    done = true;
  });
  await producer.flush();
  assert.ok(done);
  assert.equal(counts.byVersion[3], 0);
  assert.ok(counts.byVersion[2]! > 0);

  const modern = countingHandlers();
  const g = await startServer(t, {}, { handlers: modern.table });
  await g.broker.createTopic("wide", 256);
  const second = new Producer({ brokers: [`127.0.0.1:${g.port}`] });
  t.after(() => second.close());
  await second.connect(["wide"]);
  done = false;
  void second.sendBatch("wide", keyed(512)).then(() => {
    done = true;
  });
  await second.flush();
  assert.ok(done);
  assert.equal(modern.byVersion[3], 1);
  assert.equal(second.bufferedBytes, 0);
});

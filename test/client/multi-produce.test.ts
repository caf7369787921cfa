/**
 * A producer's batches for many partitions go to their leader in few Produce version 2 requests,
 * each partition settled or retried on its own, and in version 1 requests to a broker that agrees
 * only to protocol version 1.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Producer } from "../../src/client/producer.js";
import { batchCount } from "../../src/format/batch-header.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { requestApiVersion } from "../../src/protocol/frame.js";
import { decodeHandshakeRequest, encodeHandshakeResponse } from "../../src/protocol/handshake.js";
import { decodeProduceRequest, encodeProduceResponse } from "../../src/protocol/produce.js";
import {
  decodeMultiProduceRequest,
  encodeMultiProduceResponse,
  type PartitionProduceResult,
} from "../../src/protocol/produce-v2.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry, HandlerTable } from "../../src/server/handler.js";
import { startServer } from "../server/helpers.js";
import { FakeBroker, type FakeRequest } from "./fake-broker.js";

/** The default handlers, counting produce requests by version; `oldBroker`: protocol version 1 only. */
function countingHandlers(oldBroker = false): { table: HandlerTable; v1: number; v2: number } {
  const table: Array<HandlerEntry | undefined> = [...defaultHandlers()];
  const produce = table[ApiKey.PRODUCE]!;
  const out = { table: table as HandlerTable, v1: 0, v2: 0 };
  table[ApiKey.PRODUCE] = {
    ...produce,
    ...(oldBroker ? { version: 1, minVersion: 1 } : {}),
    handle: (ctx, frame, id) => {
      if (requestApiVersion(frame) === 2) out.v2++;
      else out.v1++;
      return produce.handle(ctx, frame, id);
    },
  };
  if (oldBroker) {
    // As a broker from before Produce version 2 answers: it speaks protocol version 1 only.
    table[ApiKey.HANDSHAKE] = {
      version: 1,
      handle: (ctx, frame, id) => {
        const req = decodeHandshakeRequest(frame);
        ctx.clientId = req.clientId;
        return encodeHandshakeResponse(id, {
          version: 1,
          maxFrameBytes: ctx.limits.maxFrameBytes,
          maxBatchBytes: ctx.limits.maxBatchBytes,
        });
      },
    };
  }
  return out;
}

function keyed(n: number, valueBytes = 8): { key: string; value: string }[] {
  return Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${i}`.padEnd(valueBytes, ".") }));
}

/** Every partition's offsets run 0, 1, 2... in the order its messages were sent. */
function assertInOrder(partitions: Uint32Array, offsets: Float64Array): void {
  const next = new Map<number, number>();
  for (let i = 0; i < partitions.length; i++) {
    const p = partitions[i]!;
    assert.equal(offsets[i], next.get(p) ?? 0, `message ${i} on partition ${p}`);
    next.set(p, (next.get(p) ?? 0) + 1);
  }
}

test("a send over 64 partitions goes in one or two requests, every partition in order", async (t) => {
  const counts = countingHandlers();
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 64);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  const res = await producer.sendBatch("wide", keyed(1000));
  assertInOrder(res.partitions, res.offsets);
  assert.equal(new Set(res.partitions).size, 64);
  // One for the whole send; at most one more if the first batch went before the others were sealed.
  assert.ok(counts.v2 >= 1 && counts.v1 + counts.v2 <= 2, `v1 ${counts.v1}, v2 ${counts.v2}`);
  let stored = 0;
  for (let p = 0; p < 64; p++) stored += (await f.broker.listOffsets("wide", p, { kind: "latest" })).offset;
  assert.equal(stored, 1000);
});

test("batches past the broker's frame limit are split into several requests", async (t) => {
  const counts = countingHandlers();
  const f = await startServer(t, { maxBatchBytes: 16 << 10 }, { handlers: counts.table });
  await f.broker.createTopic("wide", 16);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] }, { lingerMs: 50 });
  t.after(() => producer.close());
  // 600 KiB, at most 80 KiB (16 KiB + 64 KiB) per request.
  const res = await producer.sendBatch("wide", keyed(600, 1024));
  assertInOrder(res.partitions, res.offsets);
  assert.ok(counts.v2 >= 8, `v2 ${counts.v2}`);
  // A run of one batch left over at a split goes alone.
  assert.ok(counts.v1 <= 1, `v1 ${counts.v1}`);
});

test("against a broker that agrees only to protocol version 1, each batch goes alone", async (t) => {
  const counts = countingHandlers(true);
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("wide", 32);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  const res = await producer.sendBatch("wide", keyed(500));
  assertInOrder(res.partitions, res.offsets);
  assert.equal(counts.v2, 0);
  assert.equal(counts.v1, 32);
});

/**
 * A broker speaking protocol version 2 that answers one partition NOT_LEADER the first time and
 * another CORRUPT_BATCH always, and records what each request carried.
 */
class ScriptedLog {
  partitions = 4;
  next = new Map<number, number>();
  requests: number[][] = [];
  notLeaderOnce = new Set<number>([1]);
  corrupt = 2;

  handle = (req: FakeRequest): void => {
    if (req.apiKey === ApiKey.DESCRIBE_TOPIC) {
      req.conn.describeTopic(req, this.partitions);
      return;
    }
    if (req.apiKey !== ApiKey.PRODUCE) return;
    const many = requestApiVersion(req.frame) === 2;
    const entries = many
      ? decodeMultiProduceRequest(req.frame).partitions
      : [decodeProduceRequest(req.frame)];
    this.requests.push(entries.map((e) => e.partition));
    const results: PartitionProduceResult[] = entries.map((e) => {
      const fail = (errorCode: number, message: string): PartitionProduceResult => ({
        partition: e.partition,
        errorCode,
        baseOffset: -1,
        lastOffset: -1,
        message,
      });
      if (this.notLeaderOnce.delete(e.partition)) return fail(ErrorCode.NOT_LEADER, "moved");
      if (e.partition === this.corrupt) return fail(ErrorCode.CORRUPT_BATCH, "bad crc");
      const base = this.next.get(e.partition) ?? 0;
      const n = batchCount(e.records, 0);
      this.next.set(e.partition, base + n);
      return {
        partition: e.partition,
        errorCode: 0,
        baseOffset: base,
        lastOffset: base + n - 1,
        message: "",
      };
    });
    if (!many) {
      const r = results[0]!;
      if (r.errorCode !== 0) req.conn.error(req.correlationId, r.errorCode, r.message);
      else req.conn.socket.write(encodeProduceResponse(req.correlationId, r));
      return;
    }
    req.conn.socket.write(encodeMultiProduceResponse(req.correlationId, { partitions: results }));
  };
}

test("a partition answered NOT_LEADER retries only its own batch; one refused fails only its sends", async (t) => {
  const log = new ScriptedLog();
  const fake = await FakeBroker.start(t, log.handle, { protocolVersion: 2 });
  const producer = new Producer({ brokers: [fake.address] }, { retryBackoffMs: 1, retryBackoffMaxMs: 5 });
  t.after(() => producer.close());
  const sends = [0, 1, 2, 3, 0, 1, 3].map((partition, i) =>
    producer.send("t", { value: `v${i}`, partition }).then(
      (r) => r,
      (err: unknown) => err as ConchError,
    ),
  );
  const results = await Promise.all(sends);
  const byPartition = results.map((r) =>
    r instanceof ConchError ? r.code : (r as { partition: number; offset: number }).offset,
  );
  assert.deepEqual(byPartition, [0, 0, ErrorCode.CORRUPT_BATCH, 0, 1, 1, 1]);
  // The first request carried all four partitions; the retry only partition 1's batch (alone: version 1).
  assert.deepEqual(log.requests, [[0, 1, 2, 3], [1]]);
  assert.equal(log.next.get(1), 2);
});

test("a large batch goes in a request of its own, in its place among the gathered small ones", async (t) => {
  const counts = countingHandlers();
  const f = await startServer(t, {}, { handlers: counts.table });
  await f.broker.createTopic("mixed", 8);
  const producer = new Producer({ brokers: [`127.0.0.1:${f.port}`] });
  t.after(() => producer.close());
  await producer.connect(["mixed"]);
  const big = "x".repeat(2048);
  const messages = [
    ...Array.from({ length: 7 }, (_, i) => ({ value: `small ${i}`, partition: i + 1 })),
    ...Array.from({ length: 40 }, () => ({ value: big, partition: 0 })),
  ];
  const res = await producer.sendBatch("mixed", messages);
  assertInOrder(res.partitions, res.offsets);
  // The seven small batches in one request, the 80 KiB one alone.
  assert.deepEqual([counts.v1, counts.v2], [1, 1]);
});

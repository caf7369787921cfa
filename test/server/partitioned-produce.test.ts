/**
 * Produce version 3 on a real broker: one partitioned batch is split by partition, each
 * partition's records stored in the order they came and answered in the order partitions first
 * appear; a partition's failure is its own; a bad batch fails the whole request and stores nothing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { fetchAll, recordsOf, startServer } from "./helpers.js";

function partitioned(records: Array<[number, string]>): Buffer {
  const b = new BatchBuilder({ partitioned: true, slabBytes: 4096 });
  for (const [partition, value] of records) b.addTo(partition, value, `k-${value}`, 1_700_000_000_000);
  return Buffer.from(b.finish());
}

function request(id: number, records: Buffer, acks: p.AcksValue = 1): Buffer {
  return p.encodePartitionedProduceRequest(id, { topic: "t", acks, timeoutMs: 1000, records });
}

test("the handshake offers protocol version 3", async (t) => {
  const f = await startServer(t);
  const c = await f.client();
  const res = p.decodeHandshakeResponse(
    await c.call((id) => p.encodeHandshakeRequest(id, { minVersion: 1, maxVersion: 3, clientId: "x" })),
  );
  assert.equal(res.version, p.PARTITIONED_PRODUCE_PROTOCOL_VERSION);
});

test("one partitioned batch is stored per partition, in order, and answered per partition", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 3);
  const c = await f.client();
  // Something there already, so that base offsets are not all 0.
  await f.broker.produce("t", 1, batchOfOne("old"), "leader");
  const res = p.decodeMultiProduceResponse(
    await c.call((id) =>
      request(
        id,
        partitioned([
          [2, "a"],
          [1, "b"],
          [7, "nowhere"],
          [2, "c"],
          [1, "d"],
          [2, "e"],
        ]),
      ),
    ),
  );
  assert.deepEqual(
    res.partitions.map((r) => [r.partition, r.errorCode, r.baseOffset, r.lastOffset]),
    [
      [2, 0, 0, 2],
      [1, 0, 1, 2],
      [7, ErrorCode.UNKNOWN_PARTITION, -1, -1],
    ],
  );
  assert.match(res.partitions[2]!.message, /partition/);
  assert.deepEqual(recordsOf((await fetchAll(c, 2)).records), [
    [0, "a"],
    [1, "c"],
    [2, "e"],
  ]);
  assert.deepEqual(recordsOf((await fetchAll(c, 1)).records), [
    [0, "old"],
    [1, "b"],
    [2, "d"],
  ]);
  assert.equal((await fetchAll(c, 0)).highWatermark, 0);
});

test("a batch that fails its check, an ordinary batch, or bytes after the batch fail the whole request", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 2);
  const c = await f.client();
  const corrupt = partitioned([
    [0, "a"],
    [1, "b"],
  ]);
  corrupt[corrupt.length - 1]! ^= 0xff;
  const trailing = Buffer.concat([partitioned([[0, "a"]]), Buffer.from([1, 2, 3])]);
  for (const [records, code] of [
    [corrupt, ErrorCode.CORRUPT_BATCH],
    [batchOfOne("plain"), ErrorCode.INVALID_BATCH],
    [trailing, ErrorCode.INVALID_BATCH],
    [Buffer.alloc(0), ErrorCode.INVALID_BATCH],
  ] as const) {
    const frame = await c.call((id) => request(id, records));
    assert.equal(p.responseErrorCode(frame), code);
  }
  assert.equal((await fetchAll(c, 0)).highWatermark, 0);
  assert.equal((await fetchAll(c, 1)).highWatermark, 0);
});

test("acks = 0: stored, and answered with nothing", async (t) => {
  const f = await startServer(t);
  await f.broker.createTopic("t", 2);
  const c = await f.client();
  c.send(
    request(
      c.id(),
      partitioned([
        [1, "b"],
        [0, "a"],
      ]),
      0,
    ),
  );
  // Requests are processed in order: the next answer on the connection is the fetch's.
  assert.deepEqual(recordsOf((await fetchAll(c, 1)).records), [[0, "b"]]);
  assert.deepEqual(recordsOf((await fetchAll(c, 0)).records), [[0, "a"]]);
  assert.equal(c.received, 0);
});

function batchOfOne(value: string): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add(value, null, 1_700_000_000_000);
  return Buffer.from(b.finish());
}

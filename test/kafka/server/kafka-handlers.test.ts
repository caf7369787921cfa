/**
 * The handlers' answers in bare bytes where real clients do not show them: ListOffsets by
 * position and by time, Fetch's byte limits across partitions, DescribeConfigs and InitProducerId.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RecordBatchCursor } from "../../../src/format/kafka/record-batch-cursor.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { kafkaRequest, produceRequest, responseBody, startKafka } from "./kafka-harness.js";

function batchAt(ts: number, ...values: string[]): Buffer {
  const b = new RecordBatchBuilder();
  for (const v of values) b.add(ts, null, Buffer.from(v));
  return b.finish({ baseOffset: 0 });
}

test("kafka ListOffsets: earliest, latest, by timestamp, and none after the last record", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("times", 1);
  const c = await f.client();
  c.send(
    produceRequest(1, "times", 0, batchAt(1000, "a", "b")),
    produceRequest(2, "times", 0, batchAt(5000, "c")),
  );
  await c.next();
  await c.next();
  const asks = [-2, -1, 0, 1000, 1001, 5000, 9999];
  c.send(
    kafkaRequest(2, 1, 3, (w) => {
      w.int32(-1);
      w.arrayCount(1);
      w.string("times");
      w.arrayCount(asks.length);
      for (const ts of asks) {
        w.int32(0);
        w.int64(ts);
      }
    }),
  );
  const r = responseBody(await c.next()).body;
  assert.equal(r.arrayCount(1), 1);
  assert.equal(r.string(), "times");
  assert.equal(r.arrayCount(1), asks.length);
  const offsets: number[] = [];
  for (let i = 0; i < asks.length; i++) {
    r.int32();
    assert.equal(r.int16(), 0);
    r.int64();
    offsets.push(r.int64());
  }
  assert.deepEqual(offsets, [0, 3, 0, 0, 2, 2, -1]);
});

test("kafka Fetch: a partition with data answers at once for all; partition_max_bytes cuts after a whole batch", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("two", 2);
  const c = await f.client();
  c.send(produceRequest(1, "two", 1, batchAt(1, "first")), produceRequest(2, "two", 1, batchAt(2, "second")));
  await c.next();
  await c.next();
  const started = performance.now();
  c.send(
    kafkaRequest(1, 4, 3, (w) => {
      w.int32(-1);
      w.int32(10_000); // max wait: partition 0 is empty, partition 1 is not
      w.int32(1);
      w.int32(1 << 20);
      w.int8(0);
      w.arrayCount(1);
      w.string("two");
      w.arrayCount(2);
      for (const p of [0, 1]) {
        w.int32(p);
        w.int64(0);
        w.int32(1); // one byte: the first batch comes whole, nothing after it
      }
    }),
  );
  const r = responseBody(await c.next()).body;
  assert.ok(performance.now() - started < 5000, "answered without waiting for the empty partition");
  r.int32();
  r.arrayCount(1);
  r.string();
  assert.equal(r.arrayCount(1), 2);
  const records: Buffer[] = [];
  for (let i = 0; i < 2; i++) {
    r.int32();
    assert.equal(r.int16(), 0);
    assert.equal(r.int64(), i === 0 ? 0 : 2); // high watermark
    r.int64();
    r.nullableArrayCount(16);
    records.push(Buffer.from(r.nullableBytes() ?? Buffer.alloc(0)));
  }
  assert.equal(records[0]!.length, 0);
  const cursor = new RecordBatchCursor(records[1]!);
  const values: string[] = [];
  while (cursor.nextBatch()) while (cursor.nextRecord()) values.push(cursor.value()!.toString());
  assert.deepEqual(values, ["first"]);
});

test("kafka DescribeConfigs and InitProducerId", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("cfg", 1, { "retention.ms": "60000" });
  const c = await f.client();
  c.send(
    kafkaRequest(32, 1, 1, (w) => {
      w.arrayCount(2);
      w.int8(2);
      w.string("cfg");
      w.arrayCount(1);
      w.string("retention.ms");
      w.int8(2);
      w.string("nope");
      w.arrayCount(-1);
      w.boolean(false);
    }),
    kafkaRequest(22, 1, 2, (w) => {
      w.nullableString(null);
      w.int32(60_000);
    }),
    kafkaRequest(22, 1, 3, (w) => {
      w.nullableString("txn");
      w.int32(60_000);
    }),
  );
  const d = responseBody(await c.next()).body;
  d.int32();
  assert.equal(d.arrayCount(1), 2);
  assert.equal(d.int16(), 0);
  d.nullableString();
  d.int8();
  assert.equal(d.string(), "cfg");
  assert.equal(d.arrayCount(1), 1);
  assert.equal(d.string(), "retention.ms");
  assert.equal(d.nullableString(), "60000");
  d.boolean();
  d.int8();
  d.boolean();
  d.arrayCount(1);
  assert.equal(d.int16(), KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const ids: number[] = [];
  for (const expected of [KafkaErrorCode.NONE, KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]) {
    const p = responseBody(await c.next()).body;
    p.int32();
    assert.equal(p.int16(), expected);
    ids.push(p.int64());
    assert.equal(p.int16(), expected === 0 ? 0 : -1);
  }
  assert.ok(ids[0]! >= 0);
  assert.equal(ids[1], -1);
});

test("kafka Produce to several partitions of a request answers each", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("multi", 2);
  const c = await f.client();
  c.send(
    kafkaRequest(0, 3, 1, (w) => {
      w.nullableString(null);
      w.int16(1);
      w.int32(5000);
      w.arrayCount(1);
      w.string("multi");
      w.arrayCount(2);
      for (const p of [1, 0]) {
        w.int32(p);
        w.nullableBytes(batchAt(1, `to ${p}`));
      }
    }),
  );
  const { body: r } = responseBody(await c.next());
  r.arrayCount(1);
  r.string();
  assert.equal(r.arrayCount(1), 2);
  const got: number[][] = [];
  for (let i = 0; i < 2; i++) {
    got.push([r.int32(), r.int16(), r.int64()]);
    r.int64();
  }
  r.int32();
  r.done();
  assert.deepEqual(got, [
    [1, 0, 0],
    [0, 0, 0],
  ]);
});

test("kafka Fetch: max_bytes is kept across partitions; those past it answer their offsets only", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("full", 3);
  const c = await f.client();
  for (const p of [0, 1, 2]) {
    c.send(produceRequest(p, "full", p, batchAt(1, `in ${p}`)));
    await c.next();
  }
  c.send(
    kafkaRequest(1, 4, 9, (w) => {
      w.int32(-1);
      w.int32(0);
      w.int32(1);
      w.int32(1); // max_bytes 1: the first partition's first batch, whole, and nothing more
      w.int8(0);
      w.arrayCount(1);
      w.string("full");
      w.arrayCount(3);
      for (const p of [2, 0, 1]) {
        w.int32(p);
        w.int64(0);
        w.int32(1 << 20);
      }
    }),
  );
  const r = responseBody(await c.next()).body;
  r.int32();
  r.arrayCount(1);
  r.string();
  const got: [number, number, number][] = [];
  for (let i = r.arrayCount(1); i > 0; i--) {
    const partition = r.int32();
    assert.equal(r.int16(), 0);
    const hw = r.int64();
    r.int64();
    r.nullableArrayCount(16);
    got.push([partition, hw, r.nullableBytes()!.length > 0 ? 1 : 0]);
  }
  assert.deepEqual(got, [
    [2, 1, 1],
    [0, 1, 0],
    [1, 1, 0],
  ]);
});

test("kafka Fetch: an offset past the end is OFFSET_OUT_OF_RANGE, an unknown partition UNKNOWN_TOPIC_OR_PARTITION", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("edge", 1);
  const c = await f.client();
  c.send(produceRequest(1, "edge", 0, batchAt(1, "only")));
  await c.next();
  c.send(
    kafkaRequest(1, 4, 2, (w) => {
      w.int32(-1);
      w.int32(100);
      w.int32(1);
      w.int32(1 << 20);
      w.int8(0);
      w.arrayCount(1);
      w.string("edge");
      w.arrayCount(2);
      for (const [p, offset] of [
        [0, 50],
        [7, 0],
      ] as const) {
        w.int32(p);
        w.int64(offset);
        w.int32(1 << 20);
      }
    }),
  );
  const r = responseBody(await c.next()).body;
  r.int32();
  r.arrayCount(1);
  r.string();
  const codes: number[] = [];
  for (let i = r.arrayCount(1); i > 0; i--) {
    r.int32();
    codes.push(r.int16());
    r.int64();
    r.int64();
    r.nullableArrayCount(16);
    r.nullableBytes();
  }
  assert.deepEqual(codes, [KafkaErrorCode.OFFSET_OUT_OF_RANGE, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
});

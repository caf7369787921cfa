/**
 * Kafka fetch responses refer to the stored batches in the buffer a segment read was made into,
 * several pieces of one buffer per response, and that buffer serves later reads once the response
 * is written (format/read-buffers.ts). A client that does not read holds its responses in the
 * socket: the buffers must not serve other reads meanwhile, or it would be sent other batches'
 * bytes once it reads.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { until } from "../../server/helpers.js";
import {
  kafkaRequest,
  produceRequest,
  type RawKafkaClient,
  readProduceResponse,
  responseBody,
  startKafka,
} from "./kafka-harness.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const BATCHES = 40;
/** A Kafka batch's CRC-covered bytes start at its attributes. */
const CRC_FROM = 21;

/** Batch i: one record of 240 KiB whose bytes say i. */
function batchAt(i: number): Buffer {
  const value = Buffer.alloc(240 * KiB, 0x41 + (i % 26));
  value.write(`batch ${i}`);
  return new RecordBatchBuilder().add(1_700_000_000_000, null, value).finish({ baseOffset: 0 });
}

/** Fetch v4 of partition 0 of "t" from `offset`, up to 1 MiB, answered at once. */
function fetchAt(correlationId: number, offset: number): Buffer {
  return kafkaRequest(1, 4, correlationId, (w) => {
    w.int32(-1);
    w.int32(0);
    w.int32(1);
    w.int32(MiB);
    w.int8(0);
    w.arrayCount(1);
    w.string("t");
    w.arrayCount(1);
    w.int32(0);
    w.int64(offset);
    w.int32(MiB);
  });
}

/** The batches of a one-partition Fetch v4 response: [base offset, bytes from the attributes on]. */
function batchesOf(frame: Buffer): { correlationId: number; batches: [number, Buffer][] } {
  const { correlationId, body: r } = responseBody(frame);
  r.int32(); // throttle time
  assert.equal(r.arrayCount(1), 1);
  r.string();
  assert.equal(r.arrayCount(1), 1);
  r.int32();
  assert.equal(r.int16(), 0, "no error");
  r.int64();
  r.int64();
  assert.ok(r.int32() <= 0, "no aborted transactions");
  const records = r.bytes() ?? Buffer.alloc(0);
  const batches: [number, Buffer][] = [];
  for (let at = 0; at + 12 <= records.length; ) {
    const end = at + 12 + records.readInt32BE(at + 8);
    if (end > records.length) break;
    batches.push([Number(records.readBigInt64BE(at)), records.subarray(at + CRC_FROM, end)]);
    at = end;
  }
  return { correlationId, batches };
}

function assertBatches(frame: Buffer, expected: Buffer[], from: number, who: string): void {
  const { batches } = batchesOf(frame);
  assert.equal(batches[0]?.[0], from, `${who}: the batch asked for comes first`);
  for (const [offset, bytes] of batches) {
    assert.ok(bytes.equals(expected[offset]!.subarray(CRC_FROM)), `${who}: batch ${offset} asked at ${from}`);
  }
}

async function fetchOne(c: RawKafkaClient, id: number, offset: number): Promise<Buffer> {
  c.send(fetchAt(id, offset));
  return c.next();
}

test("kafka fetch: concurrent reads from disk get their own batches while a slow reader's responses are pending", {
  timeout: 60_000,
}, async (t) => {
  const f = await startKafka(t, { segmentBytes: 64 * MiB, maxBatchBytes: MiB });
  await f.broker.createTopic("t", 1);
  const producer = await f.client();
  const expected: Buffer[] = [];
  for (let i = 0; i < BATCHES; i++) {
    expected.push(batchAt(i));
    producer.send(produceRequest(i, "t", 0, expected[i]!));
    assert.equal(readProduceResponse(await producer.next())[0]?.[2], 0);
  }
  // The first 24 batches (5.9 MB) are past the 4 MiB tail cache: every fetch of them reads the file.
  const slow = await f.client();
  slow.socket.pause();
  for (let offset = 0; offset < 24; offset++) slow.send(fetchAt(offset, offset));
  await until(() => f.server.queuedResponseBytes >= 8 * MiB, "the slow reader's responses to queue");

  // Another client reads the same range over and over, in the other order, meanwhile.
  const fast = await f.client();
  let id = 100;
  for (let round = 0; round < 3; round++) {
    for (let offset = 23; offset >= 0; offset--) {
      assertBatches(await fetchOne(fast, id++, offset), expected, offset, "fast reader");
    }
  }

  slow.socket.resume();
  for (let offset = 0; offset < 24; offset++) {
    const frame = await slow.next();
    assert.equal(responseBody(frame).correlationId, offset);
    assertBatches(frame, expected, offset, "slow reader");
  }
});

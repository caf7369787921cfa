/**
 * What a Kafka produce cannot store as it came is refused with a Kafka error code a client
 * understands, and nothing of the request's partition is stored: compressed batches whose records
 * do not decompress, or inflate past maxBatchBytes, or are not framed right inside; a bad CRC32C; a
 * batch over maxBatchBytes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { ATTRIBUTES_AT, CRC_AT, RECORDS_AT, recordBatchCrc } from "../../../src/format/kafka/record-batch.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { produceRequest, readProduceResponse, startKafka } from "./kafka-harness.js";

const TS = 1_700_000_000_000;

function batch(add: (b: RecordBatchBuilder) => void): Buffer {
  const b = new RecordBatchBuilder();
  add(b);
  return b.finish({ baseOffset: 0 });
}

const good = batch((b) => b.add(TS, Buffer.from("k"), Buffer.from("v")));

/** `records` with its codec bits set to `codec` and the CRC made right again. */
function compressedAs(records: Buffer, codec: number): Buffer {
  const out = Buffer.from(records);
  out.writeInt16BE(codec, ATTRIBUTES_AT);
  out.writeUInt32BE(recordBatchCrc(out, 0, out.length), CRC_AT);
  return out;
}

/** `records` with its records gzipped as a whole, as a producer with compression.type=gzip sends them. */
function gzipped(records: Buffer): Buffer {
  const out = Buffer.concat([records.subarray(0, RECORDS_AT), gzipSync(records.subarray(RECORDS_AT))]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(1, ATTRIBUTES_AT);
  out.writeUInt32BE(recordBatchCrc(out, 0, out.length), CRC_AT);
  return out;
}

const cases: [string, Buffer, number][] = [
  ["a gzip batch whose records do not decompress", compressedAs(good, 1), KafkaErrorCode.CORRUPT_MESSAGE],
  ["a batch naming codec 5, which does not exist", compressedAs(good, 5), KafkaErrorCode.CORRUPT_MESSAGE],
  [
    "a gzip batch that inflates past maxBatchBytes (64 KiB of records in a few hundred bytes)",
    gzipped(
      batch((b) => {
        for (let i = 0; i < 40; i++) b.add(TS, null, Buffer.alloc(2048, 7));
      }),
    ),
    KafkaErrorCode.MESSAGE_TOO_LARGE,
  ],
  [
    "a gzip batch whose decompressed records are not framed right",
    (() => {
      const g = batch((b) => b.add(TS, Buffer.from("k"), Buffer.from("v")));
      g[g.length - 1]! ^= 0x40; // the headers count varint of the last record
      g.writeUInt32BE(recordBatchCrc(g, 0, g.length), CRC_AT);
      return gzipped(g);
    })(),
    KafkaErrorCode.CORRUPT_MESSAGE,
  ],
  [
    "a bad CRC32C",
    (() => {
      const b = Buffer.from(good);
      b[b.length - 1]! ^= 0xff;
      return b;
    })(),
    KafkaErrorCode.CORRUPT_MESSAGE,
  ],
  [
    "a transactional batch",
    (() => {
      const b = Buffer.from(good);
      b.writeInt16BE(0x10, ATTRIBUTES_AT);
      b.writeUInt32BE(recordBatchCrc(b, 0, b.length), CRC_AT);
      return b;
    })(),
    KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
  ],
  [
    "a batch over maxBatchBytes",
    batch((b) => b.add(TS, null, Buffer.alloc(70 * 1024, 1))),
    KafkaErrorCode.MESSAGE_TOO_LARGE,
  ],
];

test("kafka produce: what cannot be stored as it came is refused, nothing of it stored", async (t) => {
  const f = await startKafka(t, { maxBatchBytes: 64 * 1024 });
  await f.broker.createTopic("refused", 1);
  const c = await f.client();
  let id = 1;
  for (const [what, records, code] of cases) {
    // The refused batch behind a good one, in one partition's records: all or nothing.
    c.send(produceRequest(id, "refused", 0, Buffer.concat([good, records])));
    assert.deepEqual(readProduceResponse(await c.next()), [["refused", 0, code, -1]], what);
    id++;
  }
  assert.equal(f.broker.partition("refused", 0).highWatermark, 0);
  c.send(produceRequest(id, "refused", 0, good));
  assert.deepEqual(readProduceResponse(await c.next()), [["refused", 0, 0, 0]]);
});

test("kafka produce: a null key is stored as no key; an unknown partition is UNKNOWN_TOPIC_OR_PARTITION", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("keys", 1);
  const c = await f.client();
  c.send(
    produceRequest(
      1,
      "keys",
      0,
      batch((b) => b.add(TS, null, Buffer.from("v"))),
    ),
  );
  assert.deepEqual(readProduceResponse(await c.next()), [["keys", 0, 0, 0]]);
  c.send(produceRequest(2, "keys", 5, good));
  assert.deepEqual(readProduceResponse(await c.next()), [
    ["keys", 5, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1],
  ]);
  c.send(produceRequest(3, "bad name!", 0, good));
  assert.deepEqual(readProduceResponse(await c.next()), [
    ["bad name!", 0, KafkaErrorCode.INVALID_TOPIC_EXCEPTION, -1],
  ]);
});

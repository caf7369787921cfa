/**
 * Kafka batches stored as they came (docs/kafka.md, "The data path"): a produced RecordBatch v2 is
 * in the segment file byte for byte after its 49-byte envelope, gzip batches stay compressed, and
 * both protocols read every record of a topic that mixes Kafka and native batches. kcat
 * (librdkafka) checks the compressed path end to end, for each codec.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { BatchBuilder } from "../../../src/format/batch-builder.js";
import {
  ATTRIBUTES_AT,
  CRC_AT,
  MAX_TIMESTAMP_AT,
  RECORDS_AT,
  recordBatchCrc,
} from "../../../src/format/kafka/record-batch.js";
import { BATCH_RECORDS_AT, KAFKA_RECORD_BATCH_PAYLOAD, TIMESTAMP_AT } from "../../../src/format/layout.js";
import { readTimestampMs } from "../../../src/format/timestamp.js";
import { checkBatch } from "../../../src/format/validate.js";
import { createClient } from "../../../src/index.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import {
  hasTool,
  produceRequest,
  readProduceResponse,
  runTool,
  startKafka,
  storedCodecs,
} from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

const TS = 1_700_000_000_000;

function kafkaBatch(n: number, tag: string, gzip = false): Buffer {
  const b = new RecordBatchBuilder();
  for (let i = 0; i < n; i++) {
    b.add(TS + i, Buffer.from(`${tag}-k${i}`), Buffer.from(`${tag}-v${i}`), [Buffer.from("h"), null]);
  }
  const batch = b.finish({ baseOffset: 0 });
  if (!gzip) return batch;
  const out = Buffer.concat([batch.subarray(0, RECORDS_AT), gzipSync(batch.subarray(RECORDS_AT))]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(1, ATTRIBUTES_AT);
  out.writeUInt32BE(recordBatchCrc(out, 0, out.length), CRC_AT);
  return out;
}

async function segmentBytes(dataDir: string, topic: string): Promise<Buffer> {
  const dir = join(dataDir, "topics", topic, "0");
  const wal = (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
  return Buffer.concat(await Promise.all(wal.map((n) => readFile(join(dir, n)))));
}

async function nativeRecords(native: string, topic: string, n: number): Promise<string[]> {
  const client = createClient({ brokers: [native] });
  try {
    const consumer = client.consumer({ topics: [topic], from: "earliest" });
    const seen: string[] = [];
    for await (const m of consumer) {
      const headers = m.headers.map((h) => `${h.key}=${h.value?.toString() ?? "null"}`).join(",");
      seen.push(`${m.offset} ${m.key?.toString()} ${m.value.toString()} ${m.timestamp} ${headers}`);
      if (seen.length === n) break;
    }
    return seen;
  } finally {
    await client.close();
  }
}

test("kafka produce: the batch is in the segment byte for byte after its envelope, gzip ones compressed", async (t) => {
  const f = await startKafka(t, { flush: "sync" });
  await f.broker.createTopic("as-is", 1);
  const c = await f.client();
  const plain = kafkaBatch(3, "p");
  const gzipped = kafkaBatch(4, "g", true);
  c.send(produceRequest(1, "as-is", 0, plain));
  assert.deepEqual(readProduceResponse(await c.next()), [["as-is", 0, 0, 0]]);
  c.send(produceRequest(2, "as-is", 0, gzipped));
  assert.deepEqual(readProduceResponse(await c.next()), [["as-is", 0, 0, 3]]);
  await f.broker.partition("as-is", 0).flush();

  const wal = await segmentBytes(f.broker.config.dataDir, "as-is");
  let at = 0;
  for (const [sent, base] of [
    [plain, 0],
    [gzipped, 3],
  ] as const) {
    const size = checkBatch(wal, at, wal.length, 1 << 20);
    assert.equal(size, 49 + sent.length);
    assert.equal(wal.readUInt16BE(at + 33), KAFKA_RECORD_BATCH_PAYLOAD);
    const stored = wal.subarray(at + 49, at + size);
    assert.equal(stored.readBigInt64BE(0), BigInt(base), "the base offset is stamped in the Kafka header");
    assert.deepEqual(stored.subarray(8), sent.subarray(8), "every other byte as it came");
    at += size;
  }
  // A native consumer gets Conch batches: the same records, headers and timestamps.
  assert.deepEqual(await nativeRecords(f.native, "as-is", 7), [
    ...[0, 1, 2].map((i) => `${i} p-k${i} p-v${i} ${TS + i} h=null`),
    ...[0, 1, 2, 3].map((i) => `${i + 3} g-k${i} g-v${i} ${TS + i} h=null`),
  ]);
});

test("a topic of Kafka and native batches: each protocol reads every record in order", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
  const f = await startKafka(t);
  await f.broker.createTopic("mixed", 1);
  const b = new BatchBuilder();
  b.add("n-v0", "n-k0", TS, { h: null });
  await f.broker.produce("mixed", 0, b.finish(), "leader");
  const c = await f.client();
  c.send(produceRequest(1, "mixed", 0, kafkaBatch(2, "p")));
  await c.next();
  b.add("n-v1", "n-k1", TS, { h: null });
  await f.broker.produce("mixed", 0, b.finish(), "leader");
  c.send(produceRequest(2, "mixed", 0, kafkaBatch(2, "g", true)));
  await c.next();
  const expected = ["0 n-k0 n-v0", "1 p-k0 p-v0", "2 p-k1 p-v1", "3 n-k1 n-v1", "4 g-k0 g-v0", "5 g-k1 g-v1"];
  assert.deepEqual(
    (await nativeRecords(f.native, "mixed", 6)).map((r) => r.split(" ").slice(0, 3).join(" ")),
    expected,
  );
  const r = await runTool("kcat", [
    "-b",
    f.bootstrap,
    "-C",
    "-t",
    "mixed",
    "-o",
    "beginning",
    "-e",
    "-f",
    "%o %k %s %h\n",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.stdout.toString().trim().split("\n"),
    expected.map((e) => `${e} h=NULL`),
  );
});

const KCAT_CODECS: [number, string][] = [
  [1, "gzip"],
  [2, "snappy"],
  [3, "lz4"],
  [4, "zstd"],
];

for (const [codec, name] of KCAT_CODECS) {
  test(`kcat -z ${name}: stored ${name}-compressed as it came, consumed by kcat and the native SDK`, async (t) => {
    if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
    const f = await startKafka(t, { flush: "sync" });
    const topic = `kz-${name}`;
    await f.broker.createTopic(topic, 1);
    const lines = Array.from({ length: 50 }, (_, i) => `key${i}:value ${i} ${"x".repeat(40)}`);
    const p = await runTool(
      "kcat",
      ["-b", f.bootstrap, "-P", "-t", topic, "-p", "0", "-K:", "-z", name, "-X", "linger.ms=50"],
      `${lines.join("\n")}\n`,
    );
    assert.equal(p.code, 0, p.stderr);
    // librdkafka 2.0 compresses only when the broker's Produce range holds v0 (docs/kafka.md,
    // "Versions"); without it, it logs "Broker does not support compression type" and sends plain.
    assert.doesNotMatch(p.stderr, /does not support compression/);
    const codecs = await storedCodecs(f, topic);
    assert.ok(codecs.length > 0 && codecs.every((c) => c === codec), `stored codecs ${codecs}`);
    const r = await runTool("kcat", [
      "-b",
      f.bootstrap,
      "-C",
      "-t",
      topic,
      "-o",
      "beginning",
      "-e",
      "-f",
      "%k:%s\n",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.toString().trim().split("\n"), lines);
    const native = await nativeRecords(f.native, topic, 50);
    assert.deepEqual(
      native.map((n) => n.split(" ").slice(1, 2).join("")),
      lines.map((l) => l.split(":")[0]),
    );
  });
}

test("kafka produce: records without a timestamp (-1) are converted, taking the broker's time", async (t) => {
  const f = await startKafka(t, { flush: "sync" });
  await f.broker.createTopic("no-ts", 1);
  const b = new RecordBatchBuilder();
  b.add(TS, Buffer.from("k"), Buffer.from("v"));
  const batch = b.finish({ baseOffset: 0 });
  batch.writeBigInt64BE(-1n, 27); // base_timestamp
  batch.writeBigInt64BE(-1n, 35); // max_timestamp
  batch.writeUInt32BE(recordBatchCrc(batch, 0, batch.length), CRC_AT);
  const before = Date.now();
  const c = await f.client();
  c.send(produceRequest(1, "no-ts", 0, batch));
  assert.deepEqual(readProduceResponse(await c.next()), [["no-ts", 0, 0, 0]]);
  await f.broker.partition("no-ts", 0).flush();
  const wal = await segmentBytes(f.broker.config.dataDir, "no-ts");
  assert.equal(wal.readUInt16BE(33), 0, "stored as a Conch batch");
  const [record] = await nativeRecords(f.native, "no-ts", 1);
  const ts = Number(record!.split(" ")[3]);
  assert.ok(ts >= before && ts <= Date.now(), `timestamp ${ts}`);
});

test("kafka produce: a batch whose max_timestamp is not its largest record timestamp is stored with the corrected max_timestamp", async (t) => {
  const f = await startKafka(t, { flush: "sync" });
  await f.broker.createTopic("max-ts", 1);
  const c = await f.client();
  // As Kafka's broker does (LogValidator's setMaxTimestamp): the header is set to the records'
  // largest (TS + 2) and the batch's CRC32C recomputed. Above, below, and in one request with a
  // right one after it (the partition's batches are stored together).
  const wrong = [TS + 5, TS + 1, TS - 1].map((maxTs, i) => {
    const batch = kafkaBatch(3, `m${i}`);
    batch.writeBigInt64BE(BigInt(maxTs), MAX_TIMESTAMP_AT);
    batch.writeUInt32BE(recordBatchCrc(batch, 0, batch.length), CRC_AT);
    return batch;
  });
  c.send(produceRequest(1, "max-ts", 0, wrong[0]!));
  assert.deepEqual(readProduceResponse(await c.next()), [["max-ts", 0, 0, 0]]);
  c.send(produceRequest(2, "max-ts", 0, wrong[1]!));
  assert.deepEqual(readProduceResponse(await c.next()), [["max-ts", 0, 0, 3]]);
  c.send(produceRequest(3, "max-ts", 0, Buffer.concat([wrong[2]!, kafkaBatch(3, "ok")])));
  assert.deepEqual(readProduceResponse(await c.next()), [["max-ts", 0, 0, 6]]);
  assert.equal(f.broker.partition("max-ts", 0).highWatermark, 12);
  await f.broker.partition("max-ts", 0).flush();
  const wal = await segmentBytes(f.broker.config.dataDir, "max-ts");
  for (let at = 0, batch = 0; batch < 4; batch++) {
    const size = checkBatch(wal, at, wal.length, 1 << 20);
    assert.ok(size > 0, `stored batch ${batch} passes the log's checks (status ${size})`);
    const k = at + BATCH_RECORDS_AT;
    assert.equal(readTimestampMs(wal, at + TIMESTAMP_AT), TS + 2);
    assert.equal(wal.readBigInt64BE(k + MAX_TIMESTAMP_AT), BigInt(TS + 2));
    assert.equal(wal.readUInt32BE(k + CRC_AT), recordBatchCrc(wal, k, at + size), "the Kafka CRC32C");
    at += size;
  }
  // librdkafka checks each fetched batch's CRC32C (check.crcs) and reads every record's time.
  if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
  const r = await runTool("kcat", [
    ...["-b", f.bootstrap, "-X", "check.crcs=true", "-C", "-t", "max-ts", "-o", "beginning", "-e"],
    ...["-f", "%o %k %T\n"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const tags = ["m0", "m1", "m2", "ok"];
  assert.deepEqual(
    r.stdout.toString().trim().split("\n"),
    tags.flatMap((tag, b) => [0, 1, 2].map((i) => `${b * 3 + i} ${tag}-k${i} ${TS + i}`)),
  );
});

test("kafka produce: a batch with a record before 1970 is refused whole, nothing stored", async (t) => {
  const f = await startKafka(t, { flush: "sync" });
  await f.broker.createTopic("neg-ts", 1);
  const c = await f.client();
  const b = new RecordBatchBuilder();
  b.add(TS, Buffer.from("k0"), Buffer.from("v0"), []);
  b.add(-5, Buffer.from("k1"), Buffer.from("v1"), []);
  const batch = b.finish({ baseOffset: 0 });
  c.send(produceRequest(1, "neg-ts", 0, batch));
  const [[, , code]] = readProduceResponse(await c.next()) as [[string, number, number, number]];
  assert.notEqual(code, KafkaErrorCode.NONE);
  assert.equal(f.broker.partition("neg-ts", 0).highWatermark, 0);
});

test("kafkajs: one batch of messages with and without a timestamp is stored whole, each keeping its time", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t, { flush: "sync" });
  await f.broker.createTopic("js-ts", 1);
  const kafka = clients.kafkajs(f.bootstrap);
  const producer = kafka.producer();
  await producer.connect();
  // kafkajs takes max_timestamp from the messages that carry a timestamp (the last of them) and
  // gives the others Date.now(): this batch's header says TS, its second record is later.
  const before = Date.now();
  const [r] = await producer.send({
    topic: "js-ts",
    messages: [
      { key: "k0", value: "with", timestamp: String(TS), partition: 0 },
      { key: "k1", value: "without", partition: 0 },
      { key: "k2", value: "with too", timestamp: String(TS + 1), partition: 0 },
    ],
  });
  assert.equal(r!.errorCode, 0);
  const after = Date.now();
  const got = await nativeRecords(f.native, "js-ts", 3);
  assert.deepEqual(
    got.map((line) => line.split(" ").slice(0, 2).join(" ")),
    ["0 k0", "1 k1", "2 k2"],
  );
  const times = got.map((line) => Number(line.split(" ").at(-2)));
  assert.equal(times[0], TS);
  assert.ok(times[1]! >= before && times[1]! <= after, `timestamp ${times[1]}`);
  assert.equal(times[2], TS + 1);
});

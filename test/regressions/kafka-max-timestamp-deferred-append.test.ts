/**
 * A Kafka batch whose max_timestamp is not its largest record timestamp is stored with its header
 * set right on every path, also where the append does not start inside the produce call: a topic
 * the produce itself auto-creates, and a partition not open yet after a clean restart (lazy open).
 * These were answered CORRUPT_MESSAGE once, since the listener could only set the header right
 * when the log's refusal came back before produceTo returned.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { CRC_AT, MAX_TIMESTAMP_AT, recordBatchCrc } from "../../src/format/kafka/record-batch.js";
import { BATCH_RECORDS_AT, TIMESTAMP_AT } from "../../src/format/layout.js";
import { readTimestampMs } from "../../src/format/timestamp.js";
import { checkBatch } from "../../src/format/validate.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import {
  type KafkaFixture,
  produceRequest,
  readProduceResponse,
  startKafka,
} from "../kafka/server/kafka-harness.js";

const TS = 1_700_000_000_000;

/** Three records at TS, TS + 1 and TS + 2 under a header that says max_timestamp TS. */
function wrongMaxTimestamp(): Buffer {
  const b = new RecordBatchBuilder();
  for (let i = 0; i < 3; i++) b.add(TS + i, Buffer.from(`k${i}`), Buffer.from(`v${i}`), []);
  const batch = b.finish({ baseOffset: 0 });
  batch.writeBigInt64BE(BigInt(TS), MAX_TIMESTAMP_AT);
  batch.writeUInt32BE(recordBatchCrc(batch, 0, batch.length), CRC_AT);
  return batch;
}

/**
 * Produces the batch to partitions 0..n-1 of `topic`, one request each, sent together, and checks
 * that each is stored set right.
 */
async function producedSetRight(f: KafkaFixture, topic: string, n: number): Promise<void> {
  const batchBytes = wrongMaxTimestamp().length;
  const c = await f.client();
  for (let p = 0; p < n; p++) c.send(produceRequest(p + 1, topic, p, wrongMaxTimestamp()));
  for (let p = 0; p < n; p++) {
    assert.deepEqual(readProduceResponse(await c.next()), [[topic, p, 0, 0]], `partition ${p}: error 0`);
  }
  for (let p = 0; p < n; p++) {
    await f.broker.partition(topic, p).flush();
    const dir = join(f.broker.config.dataDir, "topics", topic, String(p));
    const wal = (await readdir(dir)).filter((name) => name.endsWith(".wal")).sort();
    const stored = Buffer.concat(await Promise.all(wal.map((name) => readFile(join(dir, name)))));
    const size = checkBatch(stored, 0, stored.length, 1 << 20);
    assert.equal(size, BATCH_RECORDS_AT + batchBytes, `partition ${p}: the batch passes the log's checks`);
    const k = BATCH_RECORDS_AT;
    assert.equal(readTimestampMs(stored, TIMESTAMP_AT), TS + 2);
    assert.equal(stored.readBigInt64BE(k + MAX_TIMESTAMP_AT), BigInt(TS + 2));
    assert.equal(stored.readUInt32BE(k + CRC_AT), recordBatchCrc(stored, k, size), "the Kafka CRC32C");
  }
}

test("kafka produce: a wrong max_timestamp is set right when the produce auto-creates its topic", async (t) => {
  const f = await startKafka(t, { flush: "sync", autoCreateTopics: true });
  assert.equal(f.broker.listTopics().includes("auto-ts"), false);
  await producedSetRight(f, "auto-ts", 1);
});

/** Enough that the background opener (32 at a time) is still at work when the produces come. */
const LAZY_PARTITIONS = 64;

test("kafka produce: a wrong max_timestamp is set right when the partition is not open yet after a clean restart", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-kafka-"));
  const first = await Broker.open({ dataDir });
  await first.createTopic("lazy-ts", LAZY_PARTITIONS);
  await first.close();
  const f = await startKafka(t, { dataDir, flush: "sync" }, undefined, { openLazily: true });
  let open = 0;
  f.broker.forEachPartition(() => open++);
  assert.ok(open < LAZY_PARTITIONS, `${open} partitions already open: the produces would not open any`);
  await producedSetRight(f, "lazy-ts", LAZY_PARTITIONS);
});

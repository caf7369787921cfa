import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { open, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { CLEAN_STOP_FILE, decodeCleanStop, encodeCleanStop } from "../../src/broker/clean-stop.js";
import { PartitionSummary } from "../../src/broker/partition-view.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { batchOf, fetchValues, recordsOf, tempDataDir } from "./helpers.js";

const PARTITIONS = 6;

/** Open logs, counted through the metrics walk (a lazy partition has no log yet). */
function openLogs(broker: Broker): number {
  let n = 0;
  broker.forEachPartition(() => n++);
  return n;
}

/** A data directory with topic "t" of PARTITIONS partitions, partition p holding p + 1 messages, cleanly stopped. */
async function stoppedDir(dataDir: string): Promise<void> {
  const broker = await Broker.open({ dataDir, segmentBytes: 64 * 1024 });
  await broker.createTopic("t", PARTITIONS);
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = 0; i <= p; i++) await broker.produce("t", p, batchOf([`p${p}-${i}`]), "leader");
  }
  await broker.close();
}

test("after a clean stop a lazy open serves from the manifest and opens a partition on first use", async (t) => {
  const dataDir = await tempDataDir(t);
  await stoppedDir(dataDir);
  const before = await Broker.open({ dataDir });
  const described = before.describeTopic("t");
  await before.close();
  assert.ok(existsSync(join(dataDir, CLEAN_STOP_FILE)), "a clean stop leaves the manifest");

  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  // Taken at once: from here on appends can make it wrong.
  assert.equal(existsSync(join(dataDir, CLEAN_STOP_FILE)), false);
  // Nothing opened by the open itself; the background opener has not had a turn yet.
  assert.equal(openLogs(broker), 0);
  assert.deepEqual(broker.describeTopic("t"), described);
  assert.deepEqual(await broker.listOffsets("t", 4, { kind: "latest" }), { found: true, offset: 5 });
  assert.equal(broker.partitionView("t", 2).logEndOffset, 3);

  // Produces waiting on one open keep their order.
  const [a, b] = await Promise.all([
    broker.produce("t", 1, batchOf(["x"]), "leader"),
    broker.produce("t", 1, batchOf(["y"]), "leader"),
  ]);
  assert.deepEqual([a.baseOffset, b.baseOffset], [2, 3]);
  const read = await broker.fetch({
    topic: "t",
    partition: 3,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 0,
  });
  assert.deepEqual(recordsOf(read.records), [
    [0, "p3-0"],
    [1, "p3-1"],
    [2, "p3-2"],
    [3, "p3-3"],
  ]);

  await broker.partitionsOpened();
  assert.equal(openLogs(broker), PARTITIONS);
  const after = broker.describeTopic("t");
  assert.equal(after.partitions[1]!.highWatermark, 4);
  after.partitions[1]!.highWatermark = 2;
  assert.deepEqual(after, described);
});

test("a clean stop of small partitions leaves no index files; the lazy open knows every offset and producer", async (t) => {
  const dataDir = await tempDataDir(t);
  const first = await Broker.open({ dataDir, segmentBytes: 64 * 1024 });
  await first.createTopic("t", 2);
  const idempotent = (seq: number): Buffer => {
    const b = new BatchBuilder();
    b.add(`s${seq}`, null, Date.now());
    b.setProducer(9, 0, seq);
    return Buffer.from(b.finish());
  };
  for (let seq = 0; seq < 5; seq++) await first.produce("t", 1, idempotent(seq), "leader");
  await first.close();
  for (const p of ["0", "1"]) {
    const files = await readdir(join(dataDir, "topics", "t", p));
    assert.deepEqual(
      files.filter((f) => f.endsWith(".idx") || f === "producers.snapshot"),
      [],
      `partition ${p}: ${files.join(", ")}`,
    );
  }

  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  assert.deepEqual(await broker.listOffsets("t", 1, { kind: "latest" }), { found: true, offset: 5 });
  // The producer table, read back from the segment: a retry is a duplicate, the next sequence follows.
  const retry = await broker.produce("t", 1, idempotent(4), "leader");
  assert.equal(retry.baseOffset, 4, "the original's offset");
  assert.equal((await broker.produce("t", 1, idempotent(5), "leader")).baseOffset, 5);
  assert.deepEqual((await fetchValues(broker, "t", 1)).slice(-2), ["s4", "s5"]);
});

test("a broker closed before its background opener finished leaves a manifest of every partition", async (t) => {
  const dataDir = await tempDataDir(t);
  await stoppedDir(dataDir);
  const first = await Broker.open({ dataDir }, undefined, { openLazily: true });
  await first.produce("t", 5, batchOf(["z"]), "leader");
  await first.close();

  const again = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => again.close());
  assert.equal(openLogs(again), 0);
  const ends = again.describeTopic("t").partitions.map((p) => p.highWatermark);
  assert.deepEqual(ends, [1, 2, 3, 4, 5, 7]);
});

test("without a manifest (a crash) a lazy open recovers each log on first use or in the background", async (t) => {
  const dataDir = await tempDataDir(t);
  await stoppedDir(dataDir);
  const bytes = Buffer.from(await readAll(join(dataDir, CLEAN_STOP_FILE)));
  // A damaged manifest is no manifest: one flipped bit.
  bytes[bytes.length - 9] = bytes[bytes.length - 9]! ^ 1;
  await writeFile(join(dataDir, CLEAN_STOP_FILE), bytes);
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  assert.equal(openLogs(broker), 0);
  assert.equal(existsSync(join(dataDir, CLEAN_STOP_FILE)), false);
  // The figures wait for the recovery rather than guess; a Metadata-style question does not.
  assert.throws(() => broker.describeTopic("t"), /still being recovered/);
  assert.equal(broker.topicInfo("t").partitions, PARTITIONS);
  assert.deepEqual(await broker.listOffsets("t", 4, { kind: "latest" }), { found: true, offset: 5 });
  await broker.recovered("t");
  assert.deepEqual(
    broker.describeTopic("t").partitions.map((p) => p.highWatermark),
    [1, 2, 3, 4, 5, 6],
  );
  await broker.partitionsOpened();
  assert.equal(openLogs(broker), PARTITIONS);
});

test("a lazily opened topic can be reconfigured, grown and deleted before its logs open", async (t) => {
  const dataDir = await tempDataDir(t);
  await stoppedDir(dataDir);
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  await broker.alterTopic("t", { "retention.ms": "3600000" });
  await broker.addPartitions("t", PARTITIONS + 2);
  assert.equal(broker.describeTopic("t").partitions.length, PARTITIONS + 2);
  const log = await broker.openPartition("t", 0);
  assert.equal(log.config.retentionMs, 3_600_000);
  await broker.deleteTopic("t");
  assert.deepEqual(broker.listTopics(), []);
});

test("the clean-stop manifest decodes what it encodes and refuses damage", () => {
  const topics = new Map([
    ["a", [new PartitionSummary(0, 10, 1234, 1), new PartitionSummary(5, 5, 0, 2)]],
    ["bé", [new PartitionSummary(2 ** 40, 2 ** 40 + 7, 99, 3)]],
  ]);
  const bytes = encodeCleanStop(topics);
  assert.deepEqual(decodeCleanStop(bytes), topics);
  for (let i = 0; i < bytes.length; i++) {
    const bad = Buffer.from(bytes);
    bad[i] = bad[i]! ^ 0x10;
    assert.equal(decodeCleanStop(bad), null, `byte ${i} flipped`);
  }
  for (let n = 0; n < bytes.length; n++) assert.equal(decodeCleanStop(bytes.subarray(0, n)), null);
});

async function readAll(path: string): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    return await file.readFile();
  } finally {
    await file.close();
  }
}

test("a manifest that disagrees with a log gives way to the log once the partition opens", async (t) => {
  const dataDir = await tempDataDir(t);
  await stoppedDir(dataDir);
  // As if a build that knows no manifest had appended after it was written.
  const stale = new Map([["t", Array.from({ length: PARTITIONS }, () => new PartitionSummary(0, 1, 10, 1))]]);
  await writeFile(join(dataDir, CLEAN_STOP_FILE), encodeCleanStop(stale));
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  assert.equal(broker.partitionView("t", 4).highWatermark, 1);
  await broker.openPartition("t", 4);
  assert.equal(broker.partitionView("t", 4).highWatermark, 5);
  assert.equal(broker.describeTopic("t").partitions[4]!.highWatermark, 5);
});

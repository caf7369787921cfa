/**
 * Produce version 3's deferred records on a broker (docs/shared-log.md, "Step 2, designed", parts
 * 3 and 4): one entry in the shared log per request, each partition's records spilled into its own
 * log later; after a crash, every acknowledged record at its acknowledged offset, replayed from the
 * shared log by each partition's open; a clean stop leaves nothing to replay; a deleted topic's
 * records never reach a new topic of the same name.
 */
import assert from "node:assert/strict";
import { cpSync, readdirSync, rmSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type TestContext, test } from "node:test";
import { pino } from "pino";
import { Broker } from "../../src/broker/broker.js";
import type { PartitionedProduce } from "../../src/broker/broker-requests.js";
import { SHARED_DIR } from "../../src/broker/shared-produce.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { PartitionIndex } from "../../src/format/partition-index.js";
import { checkPartitionedBatch } from "../../src/format/validate.js";
import { createClient } from "../../src/index.js";
import { BrokerProcess } from "../cli/cli-harness.js";
import { batchOf, fetchValues, openBroker, recordsOf, tempDataDir } from "./helpers.js";

const PARTITIONS = 16;

/** Sends `records` as one partitioned batch the way Produce version 3 does; resolves when answered. */
function producePartitioned(
  broker: Broker,
  topic: string,
  records: ReadonlyArray<[number, string]>,
  acks: "leader" | "durable" = "leader",
): Promise<Map<number, number>> {
  const b = new BatchBuilder({ partitioned: true, slabBytes: 64 * 1024 });
  for (const [partition, value] of records) b.addTo(partition, value, `k-${value}`, Date.now());
  const batch = Buffer.from(b.finish());
  assert.equal(checkPartitionedBatch(batch, 0, batch.length, batch.length), batch.length);
  const index = new PartitionIndex(batch, 0);
  return new Promise((resolve, reject) => {
    let bases: readonly number[] = [];
    const produce: PartitionedProduce = {
      deferred: (b) => (bases = b),
      split: () => reject(new Error("not deferred")),
      appended: () => resolve(new Map(Array.from(index.partitions, (p, g) => [p, bases[g]!]))),
      appendFailed: reject,
    };
    broker.producePartitioned(topic, batch, index, acks, produce, 30_000);
  });
}

/** A broker under flush=interval whose partitions open on first use, closed after the test. */
async function openLazyBroker(t: TestContext): Promise<{ broker: Broker; dataDir: string }> {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir, flush: "interval" }, undefined, { openLazily: true });
  t.after(() => broker.close());
  return { broker, dataDir };
}

/** Records for every partition, `perPartition` each, interleaved. */
function spread(tag: string, perPartition: number): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let i = 0; i < perPartition; i++)
    for (let p = 0; p < PARTITIONS; p++) out.push([p, `${tag}-${p}-${i}`]);
  return out;
}

/** Every partition opened by one ordinary record, so that partitioned produces are deferred. */
async function openEvery(broker: Broker, topic: string): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) await broker.produce(topic, p, batchOf([`open-${p}`]), "leader");
}

/** Bytes in the shared log's files. */
function sharedBytes(dataDir: string): number {
  const dir = join(dataDir, SHARED_DIR);
  return readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).size, 0);
}

/**
 * What a crash of the process leaves: the data directory as the page cache holds it now, copied
 * before any timer runs (the deferred records are in the shared log only), its lock left behind.
 */
function crashCopy(dataDir: string, into: string): void {
  cpSync(dataDir, into, { recursive: true });
  rmSync(join(into, "conch.lock"), { force: true });
}

function capturingLogger(lines: string[]) {
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return pino({ level: "info" }, stream);
}

for (const lazy of [false, true]) {
  test(`after a crash every deferred record is at its acknowledged offset (${lazy ? "lazy" : "full"} open)`, async (t) => {
    const { broker, dataDir } = await openBroker(t, { flush: "interval" });
    await broker.createTopic("t", PARTITIONS);
    await openEvery(broker, "t");
    const first = await producePartitioned(broker, "t", spread("a", 2));
    const second = await producePartitioned(broker, "t", spread("b", 1));
    for (let p = 0; p < PARTITIONS; p++) {
      assert.equal(first.get(p), 1);
      assert.equal(second.get(p), 3);
    }
    // Acknowledged, in the shared log, not in the partitions' files yet.
    assert.ok(sharedBytes(dataDir) > 0);
    const crashed = await tempDataDir(t);
    crashCopy(dataDir, crashed);

    const lines: string[] = [];
    const again = await Broker.open({ dataDir: crashed }, capturingLogger(lines), { openLazily: lazy });
    t.after(() => again.close());
    for (let p = 0; p < PARTITIONS; p++) {
      assert.deepEqual(
        await fetchValues(again, "t", p),
        [`open-${p}`, `a-${p}-0`, `a-${p}-1`, `b-${p}-0`],
        `partition ${p}`,
      );
    }
    assert.equal(
      lines.filter((l) => l.includes("records replayed from the shared log")).length,
      PARTITIONS,
      "each partition's records came from the replay",
    );
    // Appends go on after the replayed records.
    const next = await again.produce("t", 3, batchOf(["after"]), "leader");
    assert.equal(next.baseOffset, 4);
  });
}

test("acks durable: answered once the shared log's fsync covers the request, and replayed after a crash", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  const bases = await producePartitioned(broker, "t", spread("d", 2), "durable");
  assert.deepEqual([...bases.values()], new Array(PARTITIONS).fill(1));
  const crashed = await tempDataDir(t);
  crashCopy(dataDir, crashed);
  const again = await Broker.open({ dataDir: crashed }, undefined, { openLazily: true });
  t.after(() => again.close());
  for (let p = 0; p < PARTITIONS; p++)
    assert.deepEqual(await fetchValues(again, "t", p), [`open-${p}`, `d-${p}-0`, `d-${p}-1`]);
});

test("a partitioned produce to a flush=sync or compacted topic is not deferred, open or not", async (t) => {
  const { broker } = await openLazyBroker(t);
  await broker.createTopic("sync", PARTITIONS, { flush: "sync" });
  await openEvery(broker, "sync");
  await assert.rejects(producePartitioned(broker, "sync", spread("s", 1)), /not deferred/);
  await broker.createTopic("compacted", PARTITIONS, { "cleanup.policy": "compact" });
  for (let p = 0; p < PARTITIONS; p++) {
    const b = new BatchBuilder({ slabBytes: 4096 });
    b.add(`open-${p}`, `key-${p}`, Date.now());
    await broker.produce("compacted", p, Buffer.from(b.finish()), "leader");
  }
  await assert.rejects(producePartitioned(broker, "compacted", spread("c", 1)), /not deferred/);
  await broker.createTopic("sync-new", PARTITIONS, { flush: "sync" });
  await assert.rejects(producePartitioned(broker, "sync-new", spread("s", 1)), /not deferred/);
});

test("a partitioned produce naming partitions not open waits for their opens and is deferred then", async (t) => {
  const { broker } = await openLazyBroker(t);
  await broker.createTopic("fresh", PARTITIONS);
  await broker.produce("fresh", 0, batchOf(["only partition 0 is open"]), "leader");
  const bases = await producePartitioned(broker, "fresh", spread("f", 1));
  assert.equal(bases.get(0), 1);
  for (let p = 1; p < PARTITIONS; p++) assert.equal(bases.get(p), 0);
  assert.equal((await producePartitioned(broker, "fresh", spread("g", 1))).get(0), 2);
  for (let p = 0; p < PARTITIONS; p++) {
    const values = await fetchValues(broker, "fresh", p);
    assert.deepEqual(values, [...(p === 0 ? ["only partition 0 is open"] : []), `f-${p}-0`, `g-${p}-0`]);
  }
});

test("after a crash, a partitioned produce naming partitions not recovered yet is split, not held", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  const crashed = await tempDataDir(t);
  crashCopy(dataDir, crashed);
  const again = await Broker.open({ dataDir: crashed }, undefined, { openLazily: true });
  t.after(() => again.close());
  // Asked before any open could end (no I/O is handled in between): every partition is still to be
  // recovered, and a recovery may take long.
  await assert.rejects(producePartitioned(again, "t", spread("c", 1)), /not deferred/);
});

test("produces that come while a partitioned produce waits for opens are held behind it, in order", async (t) => {
  const { broker } = await openLazyBroker(t);
  await broker.createTopic("t", PARTITIONS);
  await broker.produce("t", 0, batchOf(["open"]), "leader");
  // Not awaited: the first waits for partitions 1.. to open; the next two name only partition 0,
  // which is open, and would be appended at once if nothing held them.
  const waiting = producePartitioned(broker, "t", spread("a", 1));
  const single = broker.produce("t", 0, batchOf(["single"]), "leader");
  const partitioned = producePartitioned(broker, "t", [[0, "b-0"]]);
  const [a, one, b] = await Promise.all([waiting, single, partitioned]);
  assert.equal(a.get(0), 1);
  assert.equal(one.baseOffset, 2);
  assert.equal(b.get(0), 3);
  assert.deepEqual(await fetchValues(broker, "t", 0), ["open", "a-0-0", "single", "b-0"]);
  // Nothing is held any more: the next goes straight through.
  assert.equal((await broker.produce("t", 0, batchOf(["later"]), "leader")).baseOffset, 4);
});

test("past tailCacheBytes of requests whose records are not all spilled, the next is split, not deferred", async (t) => {
  const { broker } = await openBroker(t, { flush: "interval", tailCacheBytes: 1024 });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  // One entry of more than 1 KiB: taken (the bound is checked before), and then the bound is reached.
  await producePartitioned(broker, "t", spread("big", 8));
  await assert.rejects(producePartitioned(broker, "t", spread("over", 1)), /not deferred/);
  // Every partition read past its high watermark: every run of the first entry spilled, its bytes
  // given back.
  for (let p = 0; p < PARTITIONS; p++) {
    const read = await broker.fetch({
      topic: "t",
      partition: p,
      offset: 1,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      minBytes: 0,
    });
    assert.equal(recordsOf(read.records).length, 8);
  }
  assert.equal((await producePartitioned(broker, "t", spread("again", 1))).get(0), 9);
});

test("latest is past every deferred record that was acknowledged", async (t) => {
  const { broker } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("l", 3));
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await broker.listOffsets("t", p, { kind: "latest" }), { found: true, offset: 4 });
  }
});

test("a deferred record is read at once at its offset, and spilled into its partition's log", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("x", 1));
  const read = await broker.fetch({
    topic: "t",
    partition: 5,
    offset: 1,
    maxBytes: 4096,
    maxWaitMs: 0,
    minBytes: 0,
  });
  assert.deepEqual(recordsOf(read.records), [[1, "x-5-0"]]);
  // The spill of the rest (within spillAgeMs), then the shared log's retirement (about a second).
  const deadline = Date.now() + 15_000;
  while (sharedBytes(dataDir) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(sharedBytes(dataDir), 0, "every entry spilled, synced and retired");
  for (let p = 0; p < PARTITIONS; p++)
    assert.deepEqual(await fetchValues(broker, "t", p), [`open-${p}`, `x-${p}-0`]);
});

test("a clean stop leaves nothing to replay", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir, flush: "interval" }, undefined, { openLazily: true });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("c", 3));
  assert.ok(sharedBytes(dataDir) > 0);
  await broker.close();
  assert.equal(sharedBytes(dataDir), 0);
  assert.ok(
    readdirSync(dataDir).some((n) => n.includes("clean")),
    "the clean-stop manifest was written",
  );
  const lines: string[] = [];
  const again = await Broker.open({ dataDir }, capturingLogger(lines), { openLazily: true });
  t.after(() => again.close());
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await fetchValues(again, "t", p), [`open-${p}`, `c-${p}-0`, `c-${p}-1`, `c-${p}-2`]);
  }
  assert.ok(!lines.some((l) => l.includes("replayed")));
});

test("a topic deleted and made again before a crash gets none of the old topic's records", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("old", 2));
  await broker.deleteTopic("t");
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("new", 1));
  const crashed = await tempDataDir(t);
  crashCopy(dataDir, crashed);
  const again = await Broker.open({ dataDir: crashed });
  t.after(() => again.close());
  for (let p = 0; p < PARTITIONS; p++)
    assert.deepEqual(await fetchValues(again, "t", p), [`open-${p}`, `new-${p}-0`]);
});

test("records lost between a partition's end and what the shared log holds fail that partition's open", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  await producePartitioned(broker, "t", spread("g", 1));
  const crashed = await tempDataDir(t);
  crashCopy(dataDir, crashed);
  // Partition 2 loses its one record: the shared log's records for it start at offset 1.
  const dir = join(crashed, "topics", "t", "2");
  for (const name of readdirSync(dir)) if (name.endsWith(".wal")) truncateSync(join(dir, name), 0);
  for (const name of readdirSync(dir)) if (!name.endsWith(".wal")) rmSync(join(dir, name), { force: true });
  const again = await Broker.open({ dataDir: crashed }, undefined, { openLazily: true });
  t.after(() => again.close());
  await assert.rejects(fetchValues(again, "t", 2), /records were lost in between/);
  assert.deepEqual(await fetchValues(again, "t", 1), ["open-1", "g-1-0"]);
});

test("conch broker killed right after the SDK's spread sends were answered loses none of them", {
  timeout: 60_000,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const first = await BrokerProcess.start(dataDir);
  const client = createClient({ brokers: [first.address] });
  const wide = 64;
  const acked: Array<{ partition: number; offset: number; value: string }> = [];
  try {
    await client.admin().createTopic("wide", { partitions: wide });
    const producer = client.producer({ acks: "leader" });
    // Every partition opened by an ordinary send, so that the spread sends are deferred.
    for (let p = 0; p < wide; p++) await producer.send("wide", { value: `open-${p}`, partition: p });
    for (let round = 0; round < 3; round++) {
      const messages = Array.from({ length: 128 }, (_, i) => ({ key: `k${i}`, value: `r${round}-${i}` }));
      const res = await producer.sendBatch("wide", messages);
      for (let i = 0; i < messages.length; i++) {
        acked.push({ partition: res.partitions[i]!, offset: res.offsets[i]!, value: messages[i]!.value });
      }
    }
  } finally {
    // Killed before the client's close, so within the spill age of the last answers.
    assert.deepEqual(await first.stop("SIGKILL"), { code: null, signal: "SIGKILL" });
    await client.close();
  }
  assert.ok(sharedBytes(dataDir) > 0, "the shared log held entries at the kill");
  const lines: string[] = [];
  const again = await Broker.open({ dataDir }, capturingLogger(lines), { openLazily: true });
  t.after(() => again.close());
  const held = new Map<number, Map<number, string>>();
  for (let p = 0; p < wide; p++) {
    const read = await again.fetch({
      topic: "wide",
      partition: p,
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      minBytes: 0,
    });
    held.set(p, new Map(recordsOf(read.records)));
  }
  for (const a of acked)
    assert.equal(held.get(a.partition)!.get(a.offset), a.value, `${a.value} at ${a.partition}/${a.offset}`);
  assert.ok(
    lines.some((l) => l.includes("records replayed from the shared log")),
    "replayed from the shared log",
  );
});

test("forty large partitioned produces in a row are read back whole, and replayed whole after a crash", async (t) => {
  const { broker, dataDir } = await openBroker(t, { flush: "interval" });
  await broker.createTopic("t", PARTITIONS);
  await openEvery(broker, "t");
  // Entries of about 130 KB each, whose records are views of the entry until spilled.
  const big = (tag: string, p: number) => `${tag}-${p}-${String(p).repeat(8_000)}`;
  const expected: string[][] = Array.from({ length: PARTITIONS }, (_, p) => [`open-${p}`]);
  for (let i = 0; i < 40; i++) {
    const records: Array<[number, string]> = [];
    for (let p = 0; p < PARTITIONS; p++) {
      records.push([p, big(`r${i}`, p)]);
      expected[p]!.push(big(`r${i}`, p));
    }
    await producePartitioned(broker, "t", records);
  }
  const crashed = await tempDataDir(t);
  crashCopy(dataDir, crashed);
  for (let p = 0; p < PARTITIONS; p++)
    assert.deepEqual(await fetchValues(broker, "t", p), expected[p], `partition ${p}`);
  const again = await Broker.open({ dataDir: crashed }, undefined, { openLazily: true });
  t.after(() => again.close());
  for (let p = 0; p < PARTITIONS; p++)
    assert.deepEqual(await fetchValues(again, "t", p), expected[p], `partition ${p} after the crash`);
});

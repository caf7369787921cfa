import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { CLEAN_STOP_FILE } from "../../src/broker/clean-stop.js";
import { batchOf, fetchValues, tempDataDir } from "./helpers.js";

const PARTITIONS = 1000;

/** Open logs, counted through the metrics walk (a partition not used yet has no log). */
function openLogs(broker: Broker): number {
  let n = 0;
  broker.forEachPartition(() => n++);
  return n;
}

async function partitionDirs(dataDir: string, topic: string): Promise<string[]> {
  const names = await readdir(join(dataDir, "topics", topic));
  return names.filter((n) => n !== "topic.json").sort((a, b) => Number(a) - Number(b));
}

test("a topic created on a lazily opening broker makes no partition files until a partition is used", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  await broker.createTopic("t", PARTITIONS);
  // The create wrote the topic's metadata and nothing per partition.
  assert.deepEqual(await partitionDirs(dataDir, "t"), []);
  assert.equal(openLogs(broker), 0);
  const described = broker.describeTopic("t");
  assert.equal(described.partitions.length, PARTITIONS);
  assert.deepEqual(described.partitions[999], {
    partition: 999,
    logStartOffset: 0,
    highWatermark: 0,
    quarantined: [],
  });
  assert.deepEqual(await broker.listOffsets("t", 5, { kind: "latest" }), { found: true, offset: 0 });

  // First uses open (and make) just the partitions they touch: a produce, then a fetch.
  const [a, b] = await Promise.all([
    broker.produce("t", 7, batchOf(["x"]), "durable"),
    broker.produce("t", 7, batchOf(["y"]), "durable"),
  ]);
  assert.deepEqual([a.baseOffset, b.baseOffset], [0, 1]);
  assert.deepEqual(await fetchValues(broker, "t", 3), []);
  assert.deepEqual(await partitionDirs(dataDir, "t"), ["3", "7"]);
  assert.equal(openLogs(broker), 2);
  await assert.rejects(broker.produce("t", PARTITIONS, batchOf(["z"]), "leader"), /no partition 1000/);

  // A clean stop and a lazy start: the untouched partitions stay untouched, the data is there.
  await broker.close();
  assert.ok(existsSync(join(dataDir, CLEAN_STOP_FILE)));
  const again = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => again.close());
  assert.equal(again.partitionView("t", 7).logEndOffset, 2);
  assert.deepEqual(await fetchValues(again, "t", 7), ["x", "y"]);
  assert.deepEqual(await fetchValues(again, "t", 999), []);
});

test("partitions added on a lazily opening broker open on first use, and a start without the manifest recovers only those that were used", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  await broker.createTopic("g", 2);
  await broker.produce("g", 0, batchOf(["before"]), "leader");
  await broker.addPartitions("g", 500);
  assert.deepEqual(await partitionDirs(dataDir, "g"), ["0"]);
  assert.equal(broker.describeTopic("g").partitions.length, 500);
  await broker.produce("g", 499, batchOf(["after"]), "leader");
  assert.deepEqual(await partitionDirs(dataDir, "g"), ["0", "499"]);
  await broker.close();

  // As after a crash (no manifest): every partition's log with a directory is recovered in the
  // background; one without was never opened, is empty, and waits for its first use.
  await rm(join(dataDir, CLEAN_STOP_FILE));
  const again = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => again.close());
  assert.equal(again.partitionView("g", 250).logEndOffset, 0, "known without a recovery");
  await again.partitionsOpened();
  assert.equal(openLogs(again), 2);
  assert.deepEqual(await partitionDirs(dataDir, "g"), ["0", "499"]);
  assert.deepEqual(await fetchValues(again, "g", 0), ["before"]);
  assert.deepEqual(await fetchValues(again, "g", 499), ["after"]);
  assert.deepEqual(await fetchValues(again, "g", 250), []);
});

test("a broker that opens logs at once still opens a new topic's partitions at create", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir });
  t.after(() => broker.close());
  await broker.createTopic("e", 3);
  assert.equal(openLogs(broker), 3);
  assert.equal(broker.partition("e", 2).logEndOffset, 0);
});

test("a topic created by a fetch or a produce on a lazily opening broker serves at once", async (t) => {
  const dataDir = await tempDataDir(t);
  const broker = await Broker.open({ dataDir, autoCreateTopics: true, defaultPartitions: 4 }, undefined, {
    openLazily: true,
  });
  t.after(() => broker.close());
  // The fetch creates "f" and reads its partition 2, not open yet: empty, not an error.
  assert.deepEqual(await fetchValues(broker, "f", 2), []);
  assert.equal(broker.describeTopic("f").partitions.length, 4);
  const r = await broker.produce("p", 3, batchOf(["auto"]), "durable");
  assert.equal(r.baseOffset, 0);
  assert.deepEqual(await fetchValues(broker, "p", 3), ["auto"]);
  assert.deepEqual(await partitionDirs(dataDir, "p"), ["3"]);
});

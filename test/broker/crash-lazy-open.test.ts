import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { OPEN_CONCURRENCY, openSlot, releaseSlot } from "../../src/broker/open-slots.js";
import { ErrorCode } from "../../src/format/errors.js";
import { createClient } from "../../src/index.js";
import { BrokerProcess } from "../cli/cli-harness.js";
import { crashedDir, everyLogOpen, CRASHED_PARTITIONS as PARTITIONS } from "./crashed-broker.js";
import { batchOf, conchError, fetchValues, tempDataDir } from "./helpers.js";

/** Open logs, counted through the metrics walk (a partition not recovered yet has no log). */
function openLogs(broker: Broker): number {
  let n = 0;
  broker.forEachPartition(() => n++);
  return n;
}

/** Appends half a batch after the data of partition `p`'s active segment: what a write cut by a crash leaves. */
async function tearTail(dataDir: string, p: number): Promise<void> {
  const dir = join(dataDir, "topics", "t", String(p));
  const wal = join(
    dir,
    (await readdir(dir))
      .filter((n) => n.endsWith(".wal"))
      .sort()
      .at(-1)!,
  );
  const bytes = await readFile(wal);
  const end = bytes.indexOf(Buffer.alloc(64));
  bytes.set(bytes.subarray(0, 40), end);
  await writeFile(wal, bytes);
}

test("after SIGKILL a lazy open serves a produce and a fetch before recovering the other logs, and loses no acknowledged message", {
  timeout: 60_000,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const acked = await crashedDir(dataDir);
  await tearTail(dataDir, 0);

  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  // Open and serving, with no log recovered yet: the background opener has not had a turn.
  assert.equal(openLogs(broker), 0);
  const produced = broker.produce("t", 1, batchOf(["after"]), "durable");
  const fetched = fetchValues(broker, "t", 2);
  const latest = broker.listOffsets("t", 3, { kind: "latest" });
  const earliest = broker.listOffsets("t", 4, { kind: "earliest" });
  assert.equal((await produced).baseOffset, acked[1]!.length, "appended after every acknowledged message");
  assert.deepEqual(await fetched, acked[2]);
  assert.deepEqual(await latest, { found: true, offset: acked[3]!.length });
  assert.deepEqual(await earliest, { found: true, offset: 0 });

  await broker.recovered("t");
  const ends = broker.describeTopic("t").partitions.map((p) => p.highWatermark);
  assert.deepEqual(
    ends,
    acked.map((a, p) => a.length + (p === 1 ? 1 : 0)),
    "describe reports each recovered log's end; partition 0's torn tail is cut",
  );
  await broker.partitionsOpened();
  assert.equal(openLogs(broker), PARTITIONS);
  for (let p = 0; p < PARTITIONS; p++) {
    const expected = p === 1 ? [...acked[p]!, "after"] : acked[p]!;
    assert.deepEqual(await fetchValues(broker, "t", p), expected, `partition ${p}`);
  }
  // Appended where the torn bytes were: read back whole.
  await broker.produce("t", 0, batchOf(["past the tear"]), "leader");
  assert.deepEqual(await fetchValues(broker, "t", 0), [...acked[0]!, "past the tear"]);
});

test("conch broker restarted after SIGKILL listens before its logs are recovered, and they all are afterwards", {
  timeout: 60_000,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const acked = await crashedDir(dataDir);
  await tearTail(dataDir, 5);

  const second = await BrokerProcess.start(dataDir);
  t.after(() => second.stop("SIGTERM"));
  const client = createClient({ brokers: [second.address] });
  t.after(() => client.close());
  const sent = await client.producer().send("t", { value: "after", partition: 5 });
  assert.equal(sent.offset, acked[5]!.length, "the torn tail was cut, every acknowledged message kept");
  const lines = (): { msg: string; crashedThisBoot?: boolean; lazyTopics?: number }[] =>
    second.logLines.map((l) => JSON.parse(l) as { msg: string });
  const startedWith = lines().find((l) => l.msg === "broker opened")!;
  assert.equal(startedWith.lazyTopics, 1, "the topic's logs were left to recover after listening");
  assert.equal(startedWith.crashedThisBoot, true, "a crash of the process alone");
  await everyLogOpen(second);
  const at = (msg: string): number => lines().findIndex((l) => l.msg.includes(msg));
  assert.ok(
    at("listening on") < at("every partition log holding data is open"),
    "listening came before the background opener finished",
  );
  // Once every log is recovered, describe knows each one's end (before, it says "not known yet").
  const described = await client.admin().describeTopic("t");
  assert.deepEqual(
    described.partitions.map((p) => p.highWatermark),
    acked.map((a, p) => a.length + (p === 5 ? 1 : 0)),
  );
});

test("a produce waiting for its partition's recovery gives up at its own timeout and appends nothing", {
  timeout: 60_000,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const acked = await crashedDir(dataDir);
  // Every open slot of the process held: no recovery can start until they are given back.
  for (let i = 0; i < OPEN_CONCURRENCY; i++) assert.equal(openSlot(), undefined);
  let held = OPEN_CONCURRENCY;
  const giveBack = (): void => {
    for (; held > 0; held--) releaseSlot();
  };
  t.after(giveBack);
  const broker = await Broker.open({ dataDir }, undefined, { openLazily: true });
  t.after(() => broker.close());
  await assert.rejects(
    broker.produce("t", 1, batchOf(["late"]), "leader", 50),
    conchError(ErrorCode.TIMEOUT, /did not open within 50 ms/),
  );
  await assert.rejects(broker.recovered("t", 3, 50), conchError(ErrorCode.TIMEOUT));
  giveBack();
  await broker.partitionsOpened();
  assert.deepEqual(
    await fetchValues(broker, "t", 1),
    acked[1],
    "the produce that timed out appended nothing",
  );
  assert.deepEqual(await broker.listOffsets("t", 3, { kind: "latest" }), {
    found: true,
    offset: acked[3]!.length,
  });
});

/**
 * Produce version 3's records deferred into partitions not open yet (docs/shared-log.md, "Step
 * 3"): answered once the shared log holds them, at offsets from each partition's known end, and
 * appended by each partition's open, which starts in the background; never ahead of a produce that
 * waits for the same open; all in the logs after a clean stop, or replayed after a crash.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { Logger } from "pino";
import { Broker } from "../../src/broker/broker.js";
import { OPEN_CONCURRENCY, openSlot, releaseSlot } from "../../src/broker/open-slots.js";
import { batchOf, fetchValues, recordsOf } from "./helpers.js";
import {
  capturingLogger,
  crashCopy,
  PARTITIONS,
  producePartitioned,
  sharedBytes,
  spread,
} from "./partitioned-helpers.js";

/**
 * Brokers that open partitions on first use, as `conch broker` does, on directories of the test:
 * when it ends every broker is closed, and then every directory removed.
 */
function brokers(t: test.TestContext) {
  const opened: Broker[] = [];
  const dirs: string[] = [];
  t.after(async () => {
    for (const b of opened.reverse()) await b.close().catch(() => {});
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  return {
    async dir(): Promise<string> {
      const d = await mkdtemp(join(tmpdir(), "conch-broker-"));
      dirs.push(d);
      return d;
    },
    async open(dataDir: string, logger?: Logger): Promise<Broker> {
      const b = await Broker.open({ dataDir, flush: "interval", segmentBytes: 64 * 1024 }, logger, {
        openLazily: true,
      });
      opened.push(b);
      return b;
    },
    /** A copy of `dataDir` as a crash of its broker now would leave it. */
    async crashed(dataDir: string): Promise<string> {
      const d = await this.dir();
      crashCopy(dataDir, d);
      return d;
    },
  };
}

/** Takes every slot partition opens wait for: no open goes ahead until the returned call gives them back. */
async function holdOpens(t: test.TestContext): Promise<() => void> {
  for (let i = 0; i < OPEN_CONCURRENCY; i++) await openSlot();
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    for (let i = 0; i < OPEN_CONCURRENCY; i++) releaseSlot();
  };
  t.after(release);
  return release;
}

test("records for partitions not open yet are answered from offset 0 and appended by each partition's open", async (t) => {
  const fx = brokers(t);
  const broker = await fx.open(await fx.dir());
  await broker.createTopic("t", PARTITIONS);
  const first = await producePartitioned(broker, "t", spread("a", 2));
  const second = await producePartitioned(broker, "t", spread("b", 1));
  for (let p = 0; p < PARTITIONS; p++) {
    assert.equal(first.get(p), 0, `partition ${p}`);
    assert.equal(second.get(p), 2, `partition ${p}`);
  }
  // The latest offset is past them, whether or not the partition's open has ended.
  for (let p = 0; p < PARTITIONS; p += 5) {
    assert.deepEqual(await broker.listOffsets("t", p, { kind: "latest" }), { found: true, offset: 3 });
  }
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await fetchValues(broker, "t", p), [`a-${p}-0`, `a-${p}-1`, `b-${p}-0`]);
  }
  // Once open, the partitions' own logs take what comes next.
  assert.equal((await producePartitioned(broker, "t", spread("c", 1))).get(4), 3);
  assert.equal((await broker.produce("t", 4, batchOf(["split"]), "leader")).baseOffset, 4);
  assert.deepEqual((await fetchValues(broker, "t", 4)).slice(3), ["c-4-0", "split"]);
});

test("a partition a clean stop summarised is owed records from its end", async (t) => {
  const fx = brokers(t);
  const dataDir = await fx.dir();
  const before = await fx.open(dataDir);
  await before.createTopic("t", PARTITIONS);
  for (let p = 0; p < PARTITIONS; p++) await before.produce("t", p, batchOf([`x-${p}`, `y-${p}`]), "leader");
  await before.close();
  const broker = await fx.open(dataDir);
  const bases = await producePartitioned(broker, "t", spread("z", 1));
  for (let p = 0; p < PARTITIONS; p++) assert.equal(bases.get(p), 2, `partition ${p}`);
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await fetchValues(broker, "t", p), [`x-${p}`, `y-${p}`, `z-${p}-0`]);
  }
});

test("while a produce waits for a partition's open, nothing is deferred into it ahead of that produce", async (t) => {
  const fx = brokers(t);
  const broker = await fx.open(await fx.dir());
  await broker.createTopic("t", PARTITIONS);
  // An ordinary produce to partition 0 opens it, and waits for the open.
  const waiting = broker.produce("t", 0, batchOf(["first"]), "leader");
  await assert.rejects(producePartitioned(broker, "t", spread("later", 1)), /not deferred/);
  assert.equal((await waiting).baseOffset, 0);
  // Open now: the next request is deferred, partition 0's records after the produce's.
  const bases = await producePartitioned(broker, "t", spread("next", 1));
  assert.equal(bases.get(0), 1);
  assert.equal(bases.get(1), 0);
  const read = await broker.fetch({
    topic: "t",
    partition: 0,
    offset: 1,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 0,
  });
  assert.deepEqual(recordsOf(read.records), [[1, "next-0-0"]]);
});

test("a clean stop appends everything owed to partitions not open yet: nothing left to replay", async (t) => {
  const fx = brokers(t);
  const dataDir = await fx.dir();
  const broker = await fx.open(dataDir);
  await broker.createTopic("t", PARTITIONS);
  const release = await holdOpens(t);
  await producePartitioned(broker, "t", spread("s", 3));
  // No partition could open yet: the stop opens them, and they append what they are owed. The
  // slots come back once the stop has reached the topic (200 ms: on a machine slower than that the
  // test passes without showing that the stop, and not the background opens, appended them).
  const closed = broker.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  release();
  await closed;
  assert.equal(sharedBytes(dataDir), 0);
  const lines: string[] = [];
  const again = await fx.open(dataDir, capturingLogger(lines));
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await fetchValues(again, "t", p), [`s-${p}-0`, `s-${p}-1`, `s-${p}-2`]);
  }
  assert.ok(!lines.some((l) => l.includes("replayed") || l.includes("after a crash")));
});

test("records that come while a partition opens are appended after those that came before", async (t) => {
  const fx = brokers(t);
  const broker = await fx.open(await fx.dir());
  await broker.createTopic("t", PARTITIONS);
  const release = await holdOpens(t);
  await producePartitioned(broker, "t", spread("w", 1));
  release();
  // Requests one after another while the opens run: some come before each open's append of what
  // it is owed, some while it appends, some after.
  for (let i = 0; i < 40; i++) {
    const bases = await producePartitioned(broker, "t", [[3, `r-${i}`]]);
    assert.equal(bases.get(3), i + 1);
  }
  const read = await broker.fetch({
    topic: "t",
    partition: 3,
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 0,
  });
  const values = recordsOf(read.records);
  const rest = await broker.fetch({
    topic: "t",
    partition: 3,
    offset: values.length,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 0,
  });
  assert.deepEqual(
    [...values, ...recordsOf(rest.records)],
    [[0, "w-3-0"], ...Array.from({ length: 40 }, (_, i): [number, string] => [i + 1, `r-${i}`])],
  );
});

test("after a crash, records owed to partitions not open are replayed at their offsets", async (t) => {
  const fx = brokers(t);
  const dataDir = await fx.dir();
  const broker = await fx.open(dataDir);
  await broker.createTopic("t", PARTITIONS);
  const release = await holdOpens(t);
  await producePartitioned(broker, "t", spread("r", 2));
  // Copied before any open could append them: the shared log is all that holds them.
  const again = await fx.open(await fx.crashed(dataDir));
  release();
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(await fetchValues(again, "t", p), [`r-${p}-0`, `r-${p}-1`]);
  }
  assert.equal((await again.produce("t", 7, batchOf(["after"]), "leader")).baseOffset, 2);
});

test("a topic deleted while its partitions are owed records: a new topic of the name gets none of them", async (t) => {
  const fx = brokers(t);
  const dataDir = await fx.dir();
  const broker = await fx.open(dataDir);
  await broker.createTopic("t", PARTITIONS);
  const release = await holdOpens(t);
  await producePartitioned(broker, "t", spread("old", 2));
  // The deletion's close waits for the opens under way, which wait for a slot (and then find the
  // topic closed): given back once the deletion has begun.
  const deleted = broker.deleteTopic("t");
  release();
  await deleted;
  await broker.createTopic("t", PARTITIONS);
  await producePartitioned(broker, "t", spread("new", 1));
  for (let p = 0; p < PARTITIONS; p++) assert.deepEqual(await fetchValues(broker, "t", p), [`new-${p}-0`]);
  const again = await fx.open(await fx.crashed(dataDir));
  for (let p = 0; p < PARTITIONS; p++) assert.deepEqual(await fetchValues(again, "t", p), [`new-${p}-0`]);
  // The deleted topic's records count as done with: a clean stop leaves the shared log empty.
  await broker.close();
  assert.equal(sharedBytes(dataDir), 0);
});

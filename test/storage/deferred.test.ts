/**
 * Deferred records (docs/shared-log.md, "Step 2, designed", part 2): a partition log takes the
 * records of a partitioned batch with offsets but without appending them, and spills them (framed
 * into ordinary batches) before anything reads past them, appends after them, flushes or closes,
 * as soon as a reader waits, or after a while. A reader always finds every record at the offset
 * `defer` gave it, in order with ordinary appends.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import { PartitionIndex } from "../../src/format/partition-index.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { checkPartitionedBatch } from "../../src/format/validate.js";
import { AppendMemory } from "../../src/storage/append-memory.js";
import type { SpillSource } from "../../src/storage/deferred-records.js";
import { type LogOptions, PartitionLog } from "../../src/storage/partition-log.js";
import { spillChunks } from "../../src/storage/spill-chunks.js";
import { SyncCapableOps, settle } from "./file-ops-fakes.js";
import { makeBatch, readAll, testConfig, withTempDir } from "./helpers.js";

const TS = 1_700_000_000_000;

/** A checked partitioned batch of `values[i]` to `partitions[i]`, indexed. */
function partitioned(
  records: ReadonlyArray<[partition: number, value: string]>,
  extended = false,
): PartitionIndex {
  const b = new BatchBuilder({ partitioned: true, slabBytes: 64 * 1024 });
  for (const [partition, value] of records) {
    // A header makes the extended layout.
    b.addTo(partition, value, `k-${value}`, TS, extended ? { h: "x" } : null);
  }
  const batch = Buffer.from(b.finish());
  assert.equal(checkPartitionedBatch(batch, 0, batch.length, batch.length), batch.length);
  return new PartitionIndex(batch, 0);
}

/** Counts its spills. */
class Source implements SpillSource {
  spills = 0;
  spilled(): void {
    this.spills++;
  }
}

async function openLog(dir: string, options: LogOptions = {}, overrides = {}) {
  return PartitionLog.open(
    dir,
    testConfig({ flush: "interval", flushIntervalMs: 1000, ...overrides }),
    undefined,
    {
      spillAgeMs: 60_000,
      ...options,
    },
  );
}

/** Reads every record up to the log end (waiting for a spill when one is owed). */
async function readToEnd(log: PartitionLog): Promise<string[]> {
  if (log.logEndOffset > log.highWatermark) await log.read(log.logEndOffset, 1);
  return (await readAll(log)).map((r) => `${r.offset}:${r.value}`);
}

test("deferred records get the next offsets and are read at them, in order with ordinary appends", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    await log.append(makeBatch("a", 2));
    const index = partitioned([
      [0, "x0"],
      [1, "other"],
      [0, "x1"],
    ]);
    const source = new Source();
    assert.equal(log.defer(index, 0, source), 2);
    assert.equal(log.logEndOffset, 4);
    assert.equal(log.highWatermark, 2, "not visible before the spill");
    assert.equal(source.spills, 0);
    // An ordinary append comes after them: they are spilled first.
    const r = await log.append(makeBatch("b", 1));
    assert.deepEqual([r.baseOffset, r.lastOffset], [4, 4]);
    assert.equal(source.spills, 1);
    assert.deepEqual(await readToEnd(log), ["0:a-0", "1:a-1", "2:x0", "3:x1", "4:b-0"]);
    await log.close();
  });
});

test("a read at a deferred offset waits for the spill; readNow starts it and answers later", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    const source = new Source();
    log.defer(
      partitioned([
        [3, "p"],
        [3, "q"],
      ]),
      0,
      source,
    );
    assert.equal(log.readNow(1, 4096), undefined);
    // readNow started the spill: the next write pass writes it, with no read waiting.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(source.spills, 1);
    assert.equal(log.highWatermark, 2);
    const read = await log.read(1, 4096);
    assert.equal(read.highWatermark, 2);
    assert.ok(read.records.length > 0);
    assert.equal(source.spills, 1);
    assert.deepEqual(await readToEnd(log), ["0:p", "1:q"]);
    await log.close();
  });
});

test("deferred records are spilled after spillAgeMs, once spillBytes wait, and at once for a waiting reader", async () => {
  await withTempDir(async (dir) => {
    const aged = await openLog(`${dir}/aged`, { spillAgeMs: 20 });
    const s1 = new Source();
    aged.defer(partitioned([[0, "old"]]), 0, s1);
    const deadline = Date.now() + 5000;
    while (aged.highWatermark < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(aged.highWatermark, 1);
    assert.equal(s1.spills, 1);
    await aged.close();

    const full = await openLog(`${dir}/full`, { spillBytes: 200 });
    const s2 = new Source();
    full.defer(partitioned([[0, "small"]]), 0, s2);
    await new Promise((r) => setImmediate(r));
    assert.equal(full.highWatermark, 0, "under spillBytes: still deferred");
    full.defer(partitioned([[0, "v".repeat(300)]]), 0, s2);
    await full.waitForData(1, 5000);
    assert.equal(full.highWatermark, 2);
    await full.close();

    const waited = await openLog(`${dir}/waited`);
    const waiting = waited.waitForData(0, 5000);
    const s3 = new Source();
    waited.defer(partitioned([[0, "now"]]), 0, s3);
    await waiting;
    assert.equal(waited.highWatermark, 1);
    // A reader that starts waiting after the records came spills them as well.
    waited.defer(partitioned([[0, "later"]]), 0, s3);
    await waited.waitForData(1, 5000);
    assert.equal(waited.highWatermark, 2);
    await waited.close();
  });
});

test("a long poll parking on a log with deferred records spills them, and is woken by their write", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    const source = new Source();
    log.defer(partitioned([[0, "tail"]]), 0, source);
    let woken = 0;
    const waiter = {
      waitOffset: 0,
      waitDeadline: performance.now() + 60_000,
      waitSlot: -1,
      waitEnded() {
        woken++;
      },
    };
    // The records are there to wait for: parked, and the spill they caused wakes it.
    assert.equal(log.park(waiter), true);
    const deadline = Date.now() + 5000;
    while (woken === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(woken, 1);
    assert.equal(log.highWatermark, 1);
    assert.equal(source.spills, 1);
    await log.close();
  });
});

test("a flush spills what is deferred and its fsync covers it", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    log.defer(
      partitioned([
        [0, "a"],
        [0, "b"],
      ]),
      0,
      new Source(),
    );
    await log.flush();
    assert.equal(log.flushedOffset, 2);
    await log.close();
  });
});

test("a close spills what is deferred: the records are there after a reopen", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    const source = new Source();
    log.defer(
      partitioned([
        [0, "a"],
        [0, "b"],
      ]),
      0,
      source,
    );
    await log.close();
    assert.equal(source.spills, 1);
    const again = await openLog(dir);
    assert.deepEqual(await readToEnd(again), ["0:a", "1:b"]);
    await again.close();
  });
});

test("the spills of every log are framed into one shared chunk, read from memory, and the chunk goes back for reuse", async () => {
  await withTempDir(async (root) => {
    const memory = new AppendMemory();
    const options = { appendMemory: memory };
    const a = await openLog(join(root, "a"), options);
    const b = await openLog(join(root, "b"), options);
    const shared = spillChunks(memory);
    const index = partitioned([
      [0, "a0"],
      [1, "b0"],
      [0, "a1"],
    ]);
    // Each log is read at its end first, as a consumer keeping up does: its spills are cached.
    assert.ok(a.readNow(0, 4096) !== undefined && b.readNow(0, 4096) !== undefined);
    a.defer(index, 0, new Source());
    b.defer(index, 1, new Source());
    a.spillDeferred();
    b.spillDeferred();
    await Promise.all([a.read(1, 4096), b.read(0, 4096)]);
    // Both spills are in the shared buffer's chunk, one run of each log's tail cache in it.
    const chunk = shared.chunk;
    assert.equal(chunk.cachedRuns, 2);
    assert.equal(chunk.outstanding, 0);
    const fromMemory = a.readNow(0, 4096);
    assert.ok(fromMemory !== undefined, "a's spill is served from memory");
    assert.deepEqual(await readToEnd(a), ["0:a0", "1:a1"]);
    assert.deepEqual(await readToEnd(b), ["0:b0"]);
    await a.close();
    await b.close();
    assert.equal(chunk.cachedRuns, 0, "the closed logs' tail caches let go of it");
    // The next spill that needs a fresh chunk leaves this one to the free chunks.
    const freeBefore = memory.freeBytes;
    shared.reserve(chunk.buf.length);
    assert.equal(memory.freeBytes, freeBefore + chunk.buf.length);
  });
});

test("a failed spill write of one log leaves another log's spill in the same shared chunk written and readable", async () => {
  await withTempDir(async (root) => {
    const memory = new AppendMemory();
    const failing = new SyncCapableOps();
    const a = await openLog(join(root, "a"), { appendMemory: memory, fileOps: failing });
    const b = await openLog(join(root, "b"), { appendMemory: memory });
    const index = partitioned([
      [0, "a0"],
      [1, "b0"],
      [1, "b1"],
    ]);
    const sourceA = new Source();
    const sourceB = new Source();
    assert.ok(a.readNow(0, 4096) !== undefined && b.readNow(0, 4096) !== undefined);
    a.defer(index, 0, sourceA);
    b.defer(index, 1, sourceB);
    failing.failSyncNext = new Error("EIO: injected");
    a.spillDeferred();
    b.spillDeferred();
    const chunk = spillChunks(memory).chunk;
    await Promise.all([b.read(0, 4096), settle()]);
    assert.equal(sourceA.spills, 0, "a's records stay owed to the shared log");
    assert.equal(sourceB.spills, 1);
    assert.equal(a.highWatermark, 0, "nothing of a's failed write is visible");
    assert.deepEqual(await readToEnd(b), ["0:b0", "1:b1"]);
    assert.equal(chunk.outstanding, 0, "the failed write let go of the chunk too");
    assert.equal(chunk.cachedRuns, 1, "only b's run is cached");
    await a.close().catch(() => {});
    await b.close();
  });
});

test("the spill of a log nobody read since its last spill is not cached, and its chunk is free at once", async () => {
  await withTempDir(async (root) => {
    const memory = new AppendMemory();
    const log = await openLog(join(root, "a"), { appendMemory: memory });
    const shared = spillChunks(memory);
    log.defer(partitioned([[0, "a0"]]), 0, new Source());
    await log.spillDeferred()!.ended();
    const chunk = shared.chunk;
    assert.equal(chunk.outstanding, 0);
    assert.equal(chunk.cachedRuns, 0, "nothing refers to the chunk once the spill is written");
    assert.equal(log.readNow(0, 4096), undefined, "read from the file, not from memory");
    assert.deepEqual(await readToEnd(log), ["0:a0"]);
    // Read since: the next spill is cached, and served from memory.
    log.defer(partitioned([[0, "a1"]]), 0, new Source());
    await log.spillDeferred()!.ended();
    assert.equal(chunk.cachedRuns, 1);
    const cached = log.readNow(1, 4096);
    assert.ok(cached !== undefined, "the second spill is served from memory");
    assert.deepEqual(await readToEnd(log), ["0:a0", "1:a1"]);
    await log.close();
  });
});

test("a read over a spill that is not cached, between appends that are, is not cut at it", async () => {
  await withTempDir(async (root) => {
    const log = await openLog(join(root, "a"), { appendMemory: new AppendMemory() });
    await log.append(makeBatch("a", 1));
    log.defer(partitioned([[0, "d0"]]), 0, new Source());
    await log.spillDeferred()!.ended();
    await log.append(makeBatch("b", 1));
    assert.equal(log.readNow(0, 1 << 20), undefined, "the cache cannot serve it whole");
    const { records } = await log.read(0, 1 << 20);
    const values: string[] = [];
    const c = new RecordCursor(records);
    while (c.next()) values.push(`${c.offset}:${c.value().toString()}`);
    assert.deepEqual(values, ["0:a-0", "1:d0", "2:b-0"]);
    await log.close();
  });
});

test("defer refuses, taking nothing, where it cannot keep its promise", async () => {
  await withTempDir(async (dir) => {
    const sync = await openLog(`${dir}/sync`, {}, { flush: "sync" });
    assert.equal(sync.canDefer, false);
    assert.throws(() => sync.defer(partitioned([[0, "a"]]), 0, new Source()), /cannot take deferred/);
    await sync.close();
    const compacted = await openLog(`${dir}/compacted`, {}, { cleanupPolicy: "compact" });
    assert.equal(compacted.canDefer, false);
    await compacted.close();
    const small = await openLog(`${dir}/small`, {}, { maxBatchBytes: 1024 });
    assert.throws(
      () => small.defer(partitioned([[0, "v".repeat(2000)]]), 0, new Source()),
      (err: { code?: number }) => err.code === ErrorCode.BATCH_TOO_LARGE,
    );
    assert.equal(small.logEndOffset, 0);
    await small.close();
  });
});

test("a spill frames runs of both layouts and past the batch limit into several batches", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir, {}, { maxBatchBytes: 1024 });
    const source = new Source();
    const want: string[] = [];
    for (let i = 0; i < 12; i++) {
      const value = `r${i}-${"v".repeat(150)}`;
      log.defer(partitioned([[0, value]], i % 3 === 0), 0, source);
      want.push(`${i}:${value}`);
    }
    assert.deepEqual(await readToEnd(log), want);
    assert.equal(source.spills, 12);
    await log.close();
  });
});

test("model: any mix of deferred and ordinary appends, spills and reads reads back as the model says", async () => {
  const op = fc.oneof(
    {
      arbitrary: fc.record({
        kind: fc.constant("defer" as const),
        values: fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 5 }),
        extended: fc.boolean(),
      }),
      weight: 4,
    },
    {
      arbitrary: fc.record({ kind: fc.constant("append" as const), count: fc.integer({ min: 1, max: 3 }) }),
      weight: 2,
    },
    { arbitrary: fc.record({ kind: fc.constant("read" as const) }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant("flush" as const) }), weight: 1 },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
      await withTempDir(async (dir) => {
        const log = await openLog(dir, { spillBytes: 600 }, { maxBatchBytes: 2048 });
        const model: string[] = [];
        const source = new Source();
        let deferCalls = 0;
        let tag = 0;
        for (const o of ops) {
          if (o.kind === "defer") {
            // Partition 7's records among others', in the batch's order.
            const records: Array<[number, string]> = [];
            o.values.forEach((v, i) => {
              records.push([7, v]);
              if (i % 2 === 0) records.push([8, `noise-${i}`]);
            });
            const index = partitioned(records, o.extended);
            const base = log.defer(index, index.partitions.indexOf(7), source);
            assert.equal(base, model.length);
            for (const v of o.values) model.push(v);
            deferCalls++;
          } else if (o.kind === "append") {
            const t = `t${tag++}`;
            const r = await log.append(makeBatch(t, o.count));
            assert.equal(r.baseOffset, model.length);
            for (let i = 0; i < o.count; i++) model.push(`${t}-${i}`);
          } else if (o.kind === "read") {
            const got = await readToEnd(log);
            assert.deepEqual(
              got,
              model.map((v, i) => `${i}:${v}`),
            );
          } else {
            await log.flush();
          }
          assert.equal(log.logEndOffset, model.length);
        }
        await log.close();
        assert.equal(source.spills, deferCalls, "every deferred run told once");
        const again = await openLog(dir);
        assert.deepEqual(
          await readToEnd(again),
          model.map((v, i) => `${i}:${v}`),
        );
        await again.close();
      });
    }),
    { numRuns: 40 },
  );
});

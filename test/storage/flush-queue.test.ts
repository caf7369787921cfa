import assert from "node:assert/strict";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { defaultFileOps, type FileOps } from "../../src/storage/file-ops.js";
import { BULK_MIN_WAITING, FlushQueue } from "../../src/storage/flush-queue.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { type SyncFs, syncFileSystem } from "../../src/storage/syncfs.js";
import { Ticker } from "../../src/storage/ticker.js";
import { gate } from "./file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

/** Resolves on the next turn of the event loop, after pending I/O callbacks. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await turn();
  }
}

test("the flush queue runs at most its limit at once, in due order, and never queues a log twice", async () => {
  const queue = new FlushQueue(2);
  const started: number[] = [];
  const ended: number[] = [];
  const gates = [gate(), gate(), gate(), gate()];
  const entries = gates.map((g, i) =>
    queue.entry(
      () => {
        started.push(i);
        return g.promise;
      },
      () => ended.push(i),
    ),
  );
  for (const e of entries) queue.push(e);
  queue.push(entries[0]!); // running: no second fsync
  queue.push(entries[3]!); // queued: no second place
  assert.deepEqual(started, [0, 1]);
  assert.equal(queue.running, 2);
  assert.equal(queue.waiting, 2);
  queue.remove(entries[2]!);
  gates[1]!.open();
  await until("entry 1 ended", () => ended.length === 1);
  assert.deepEqual(started, [0, 1, 3], "a removed entry is skipped, the next one starts");
  gates[0]!.open();
  gates[3]!.open();
  await until("all ended", () => ended.length === 3);
  assert.equal(queue.running, 0);
  assert.equal(queue.waiting, 0);
  // A failed fsync frees its place like any other.
  const failing = queue.entry(
    () => Promise.reject(new Error("disk gone")),
    () => ended.push(9),
  );
  queue.push(failing);
  await until("the failing entry ended", () => ended.length === 4);
  assert.equal(queue.running, 0);
  assert.equal(queue.lags.count, 3, "a failed fsync made nothing durable: no lag counted");
});

/** FileOps whose datasyncs wait for `hold` (when set) and record how many ran at once. */
class CountingOps implements FileOps {
  readonly writev = defaultFileOps.writev;
  readonly truncate = defaultFileOps.truncate;
  readonly preallocate = defaultFileOps.preallocate;
  running = 0;
  most = 0;
  total = 0;
  hold: Promise<void> | null = null;

  async datasync(file: FileHandle): Promise<void> {
    this.running++;
    this.total++;
    this.most = Math.max(this.most, this.running);
    try {
      if (this.hold !== null) await this.hold;
      await defaultFileOps.datasync(file);
    } finally {
      this.running--;
    }
  }
}

/**
 * Opens logs in `dir` with a 5 ms flush interval, on their own ticker and a flush queue of `limit`
 * (with `bulk` as its syncfs for many waiting logs, when given).
 */
function intervalLogs(dir: string, limit: number, bulk: SyncFs | null = null) {
  const ops = new CountingOps();
  const ticker = new Ticker();
  const flushQueue = new FlushQueue(limit, bulk);
  const config = testConfig({ flush: "interval", flushIntervalMs: 5 });
  const open = (name: string) =>
    PartitionLog.open(join(dir, name), config, undefined, { fileOps: ops, ticker, flushQueue });
  return { ops, flushQueue, open };
}

test("interval fsyncs of many logs written together run a bounded number at a time, and each log's data is fsynced", async () => {
  await fortyWritten("none", async (_logs, { ownFsyncs, mostAtOnce }) => {
    assert.ok(mostAtOnce() <= 2, `${mostAtOnce()} interval fsyncs ran at once (limit 2)`);
    assert.equal(ownFsyncs(), 40, "one fsync per written log");
  });
});

test("a write while a log's interval fsync runs gets a fsync of its own later; durable appends do not wait for the queue", async () => {
  await withTempDir(async (dir) => {
    const { ops, flushQueue, open } = intervalLogs(dir, 1);
    const a = await open("a");
    const b = await open("b");
    try {
      const held = gate();
      ops.hold = held.promise;
      await a.append(makeBatch("a", 1));
      await until("a's interval fsync runs", () => flushQueue.running === 1);
      await a.append(makeBatch("a", 1));
      await b.append(makeBatch("b", 1));
      await until("b's interval fsync is queued", () => flushQueue.waiting === 1);
      // The queue is full, and durable appends are group-committed by their log, not queued.
      ops.hold = null;
      await b.append(makeBatch("b", 1), { durable: true });
      held.open();
      await until("both logs fsynced to their end", () =>
        [a, b].every((log) => log.flushedOffset === log.logEndOffset),
      );
      assert.equal(flushQueue.running + flushQueue.waiting, 0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

test("the flush queue measures how long due fsyncs wait for a place", async () => {
  const queue = new FlushQueue(1);
  const first = gate();
  const held = queue.entry(
    () => first.promise,
    () => {},
  );
  const waiting = queue.entry(
    () => Promise.resolve(),
    () => {},
  );
  assert.equal(queue.oldestWaitMs(), 0, "nothing waits");
  queue.push(held);
  queue.push(waiting);
  const pushedAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const waited = queue.oldestWaitMs();
  assert.ok(waited >= 25 && waited <= performance.now() - pushedAt + 1, `waited ${waited} ms`);
  assert.equal(queue.delays.count, 1, "the first started at once");
  first.open();
  await until("the second started", () => queue.delays.count === 2);
  assert.equal(queue.oldestWaitMs(), 0);
  // The first waited about nothing, the second the 30 ms the first held its place.
  assert.ok(queue.delays.sum >= 0.025, `delays sum ${queue.delays.sum} s`);
  assert.equal(queue.delays.counts[0], 1, "one start within the first bucket (50 µs)");
  // And from due to end: both ended, the second at least the 30 ms after it came due.
  await until("both ended", () => queue.lags.count === 2);
  assert.ok(queue.lags.sum >= 0.025, `lags sum ${queue.lags.sum} s`);
});

/** A syncfs that counts its calls and their directories, then runs the real one or fails. */
function countingSyncFs(fail = false): { syncfs: SyncFs; dirs: string[] } {
  const dirs: string[] = [];
  const syncfs: SyncFs = async (dir) => {
    dirs.push(dir);
    if (fail) throw new Error("EIO");
    await syncFileSystem(dir);
  };
  return { syncfs, dirs };
}

/**
 * 40 interval logs in a temp directory, on a queue of 2 with no bulk syncfs ("none") or one that
 * counts its calls ("ok", then the real one; "fail"), each written once and fsynced by whichever
 * path; `check` then runs with them open.
 */
async function fortyWritten(
  bulk: "none" | "ok" | "fail",
  check: (
    logs: PartitionLog[],
    it: {
      dir: string;
      dirs: string[];
      ownFsyncs: () => number;
      mostAtOnce: () => number;
      flushQueue: FlushQueue;
    },
  ) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const { syncfs, dirs } = countingSyncFs(bulk === "fail");
    const { ops, flushQueue, open } = intervalLogs(dir, 2, bulk === "none" ? null : syncfs);
    const logs: PartitionLog[] = [];
    try {
      for (let i = 0; i < 40; i++) logs.push(await open(String(i)));
      const opened = ops.total;
      await Promise.all(logs.map((log) => log.append(makeBatch("a", 1))));
      await until("every log fsynced", () => logs.every((log) => log.flushedOffset === log.logEndOffset));
      await until("the queue is idle", () => flushQueue.running + flushQueue.waiting === 0);
      const ownFsyncs = () => ops.total - opened;
      await check(logs, { dir, dirs, ownFsyncs, mostAtOnce: () => ops.most, flushQueue });
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });
}

test("with many logs due at once, one syncfs makes them durable instead of an fsync each", async () => {
  await fortyWritten("ok", async (_logs, { dir, dirs, ownFsyncs, flushQueue }) => {
    assert.ok(flushQueue.bulkSyncs >= 1 && flushQueue.bulkEntries >= BULK_MIN_WAITING, "a bulk sync ran");
    assert.equal(dirs.length, flushQueue.bulkSyncs, "one syncfs a bulk sync: every log on one file system");
    assert.equal(dirs[0], dir, "the syncfs of the logs' parent directory");
    assert.equal(flushQueue.bulkEntries + ownFsyncs(), 40, "every log covered once, by one or the other");
    assert.ok(ownFsyncs() < 40 - BULK_MIN_WAITING + 1, `${ownFsyncs()} own fsyncs`);
  });
});

test("a failed bulk syncfs leaves each log to its own fsync, and the bulk path off", async () => {
  await fortyWritten("fail", async (logs, { dirs, ownFsyncs, flushQueue }) => {
    assert.equal(dirs.length, 1, "one syncfs tried");
    assert.equal(flushQueue.bulkSyncs, 0);
    assert.equal(ownFsyncs(), 40, "an fsync of its own for every log");
    // Off from now on: a second round of many due logs fsyncs each.
    await Promise.all(logs.map((log) => log.append(makeBatch("b", 1))));
    await until("every log fsynced again", () => logs.every((log) => log.flushedOffset === log.logEndOffset));
    assert.equal(dirs.length, 1, "no syncfs tried again");
    assert.equal(ownFsyncs(), 80);
  });
});

test("while a bulk sync runs, enough waiting logs wait for the next one instead of fsyncing beside it", async () => {
  const held = gate();
  const syncfsCalls: string[] = [];
  const queue = new FlushQueue(2, async (dir) => {
    syncfsCalls.push(dir);
    if (syncfsCalls.length === 1) await held.promise;
  });
  let ownSyncs = 0;
  // Own fsyncs take a while too: until `slow` opens, the places stay busy.
  const slow = gate();
  const covered: number[] = [];
  const entries = Array.from({ length: 40 }, (_, i) =>
    queue.entry(
      async () => {
        ownSyncs++;
        await slow.promise;
      },
      () => {},
      { dir: `/tmp/q/${i}`, mark: () => () => covered.push(i) },
    ),
  );
  // Two start fsyncs of their own at once (free places); the next 16 make a bulk sync.
  for (const e of entries.slice(0, BULK_MIN_WAITING + 2)) queue.push(e);
  await until("the first bulk sync runs", () => syncfsCalls.length === 1);
  assert.equal(queue.waiting, 0, "the bulk took every waiting log");
  for (const e of entries.slice(BULK_MIN_WAITING + 2)) queue.push(e);
  assert.equal(queue.waiting, 40 - BULK_MIN_WAITING - 2, "the two places still busy: the rest wait");
  // The places free up: with 16 or more waiting and the bulk still running, none starts its own.
  slow.open();
  for (let i = 0; i < 5; i++) await turn();
  assert.equal(ownSyncs, 2, "no fsync of their own while the bulk runs and 16 or more wait");
  assert.equal(queue.running, 0);
  held.open();
  await until("every log covered", () => covered.length + ownSyncs === 40);
  assert.equal(syncfsCalls.length, 2, "the rest by the second bulk sync");
  assert.equal(queue.bulkEntries, 40 - ownSyncs);
});

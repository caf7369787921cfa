import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { join } from "node:path";
import { test } from "node:test";
import { defaultFileOps, type FileOps } from "../../src/storage/file-ops.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Ticker, TickTask } from "../../src/storage/ticker.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

/** Node timers alive now (ref'd or not), counted by their async resources. */
function timerCounter(): { live(): number; stop(): void } {
  const live = new Set<number>();
  const hook = createHook({
    init(id, type) {
      if (type === "Timeout") live.add(id);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return { live: () => live.size, stop: () => hook.disable() };
}

test("1,000 open logs with writes, flush intervals and parked waits run a constant number of timers", async () => {
  await withTempDir(async (dir) => {
    const timers = timerCounter();
    const before = timers.live();
    const logs: PartitionLog[] = [];
    try {
      for (let i = 0; i < 1000; i++) {
        const log = await PartitionLog.open(join(dir, String(i)), testConfig({ flush: "interval" }));
        logs.push(log);
      }
      // Every log written (flush and trim due) and waited on (a long-poll deadline each).
      await Promise.all(logs.map((log) => log.append(makeBatch("t", 1))));
      const waits = logs.map((log) => log.waitForData(log.highWatermark, 60_000));
      const during = timers.live() - before;
      assert.ok(during <= 3, `${during} timers for 1,000 logs`);
      await Promise.all(logs.map((log) => log.close()));
      await Promise.all(waits);
    } finally {
      timers.stop();
      await Promise.all(logs.map((log) => log.close()));
    }
  });
});

test("the ticker runs tasks in due order, moves them, and forgets cancelled ones", async () => {
  const ticker = new Ticker();
  const ran: string[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  const task = (name: string): TickTask => {
    const t = new TickTask(() => {
      ran.push(name);
      if (ticker.size === 0) resolveDone();
    });
    // Upkeep tasks hold nothing open; these stand for waits, which do.
    ticker.keepAlive(t, true);
    return t;
  };
  const [a, b, c, d] = [task("a"), task("b"), task("c"), task("d")];
  const now = performance.now();
  ticker.schedule(a, now + 30);
  ticker.schedule(b, now + 10);
  ticker.schedule(c, now + 20);
  ticker.schedule(d, now + 5);
  ticker.schedule(a, now + 1); // earlier
  ticker.schedule(b, now + 40); // later
  ticker.cancel(d);
  assert.equal(ticker.size, 3);
  await done;
  assert.deepEqual(ran, ["a", "c", "b"]);
  assert.equal(d.scheduled, false);
});

test("a long-poll deadline on the ticker ends within a few ms of its time", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig(), undefined, { ticker: new Ticker() });
    for (const ms of [20, 50]) {
      const start = performance.now();
      await log.waitForData(0, ms);
      const took = performance.now() - start;
      assert.ok(took >= ms - 1 && took < ms + 25, `a ${ms} ms wait took ${took.toFixed(1)} ms`);
    }
    await log.close();
  });
});

test("flush.interval.ms: written data is fsynced within the interval, and an idle log schedules nothing", async () => {
  await withTempDir(async (dir) => {
    let syncs = 0;
    const ops: FileOps = {
      ...defaultFileOps,
      datasync: (fh) => {
        syncs++;
        return defaultFileOps.datasync(fh);
      },
      datasyncFd: (fd, done) => {
        syncs++;
        defaultFileOps.datasyncFd!(fd, done);
      },
    };
    const ticker = new Ticker();
    const config = testConfig({ flush: "interval", flushIntervalMs: 30 });
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops, ticker, trimIntervalMs: 5 });
    assert.equal(ticker.size, 0, "a new, empty log has nothing due");
    const opened = syncs;
    const start = performance.now();
    await log.append(makeBatch("f", 1));
    assert.equal(syncs, opened, "acknowledged before an fsync");
    while (syncs === opened) await new Promise((resolve) => setImmediate(resolve));
    const took = performance.now() - start;
    assert.ok(took >= 29 && took < 80, `fsynced after ${took.toFixed(1)} ms`);
    // Quiet: the trim checks let the tail cache go and stop; nothing is due any more.
    const quiet = Date.now() + 2000;
    while (ticker.size > 0 && Date.now() < quiet) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(ticker.size, 0, "a quiet log leaves the ticker");
    assert.equal(syncs, opened + 1, "no fsync without new writes");
    await log.close();
  });
});

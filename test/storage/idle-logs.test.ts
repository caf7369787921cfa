import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import type { LogConfig } from "../../src/storage/config.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Ticker } from "../../src/storage/ticker.js";
import { testConfig, withTempDir } from "./helpers.js";

const LOGS = 200;
/** Every periodic interval of the logs below: their follow-up work is done within a few of these. */
const INTERVAL_MS = 20;

const builder = new BatchBuilder({ slabBytes: 64 * 1024 });
function keyedBatch(key: string): Buffer {
  builder.add("value", key, Date.now());
  return Buffer.from(builder.finish());
}

/** Resolves once `ticker` has nothing scheduled; fails after `limitMs`. */
async function drained(ticker: Ticker, limitMs: number): Promise<void> {
  const until = performance.now() + limitMs;
  while (ticker.size > 0) {
    if (performance.now() > until) assert.fail(`${ticker.size} tasks still scheduled after ${limitMs} ms`);
    await new Promise((ok) => setTimeout(ok, INTERVAL_MS));
  }
}

test("logs written once run no timed task once their follow-up work is done (no per-partition ticking while idle)", async () => {
  await withTempDir(async (dir) => {
    const ticker = new Ticker();
    const logs: PartitionLog[] = [];
    try {
      for (let i = 0; i < LOGS; i++) {
        // Every kind of timed work a log has: interval fsyncs, quiet checks, retention, compaction.
        const config: Partial<LogConfig> = {
          flush: "interval",
          flushIntervalMs: INTERVAL_MS,
          retentionMs: 60_000,
          cleanupPolicy: i % 2 === 0 ? "compact" : "delete",
          compactionDelayMs: INTERVAL_MS,
        };
        const options = { ticker, trimIntervalMs: INTERVAL_MS, retentionCheckMs: INTERVAL_MS };
        logs.push(await PartitionLog.open(join(dir, String(i)), testConfig(config), undefined, options));
      }
      await Promise.all(logs.map((log, i) => log.append(keyedBatch(`k${i}`))));
      // The follow-up work of the writes: each log's owed fsync and its quiet checks (three).
      await drained(ticker, 10_000);
      const ran = ticker.runs;
      assert.ok(ran >= LOGS * 2, `the logs' follow-up work ran on the ticker (${ran} task runs)`);
      for (const log of logs) assert.equal(log.highWatermark, 1);
      const wakeUps = ticker.wakeUps;
      // Idle for many intervals: a task any log kept scheduled would have run several times.
      await new Promise((ok) => setTimeout(ok, 15 * INTERVAL_MS));
      assert.equal(ticker.size, 0);
      assert.equal(ticker.runs - ran, 0, "tasks ran while every log was idle");
      assert.equal(ticker.wakeUps - wakeUps, 0, "the ticker woke while every log was idle");
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });
});

test("a compacted log checks for work only while it has a closed segment", async () => {
  await withTempDir(async (dir) => {
    const ticker = new Ticker();
    const config = testConfig({
      flush: "sync",
      cleanupPolicy: "compact",
      compactionDelayMs: INTERVAL_MS,
      segmentBytes: 4096,
    });
    const log = await PartitionLog.open(join(dir, "0"), config, undefined, {
      ticker,
      trimIntervalMs: 60_000,
    });
    try {
      await log.append(keyedBatch("a"));
      // Several compaction intervals: a check scheduled for a log of one segment would have run.
      await new Promise((ok) => setTimeout(ok, 5 * INTERVAL_MS));
      assert.equal(ticker.runs, 0);
      // Only the quiet check (60 s away) is scheduled: one segment, nothing to compact.
      assert.equal(ticker.size, 1);
      // Fill past a segment: the roll starts the checks, and they keep running while it has one.
      while (log.segmentCount < 2) await log.append(keyedBatch("a"));
      const ran = ticker.runs;
      await new Promise((ok) => setTimeout(ok, 10 * INTERVAL_MS));
      assert.ok(ticker.runs - ran >= 2, `compaction checks ran ${ticker.runs - ran} times`);
    } finally {
      await log.close();
    }
  });
});

/**
 * A stop made durable by one syncfs (stop-sync.ts): closed with a StopSync, a log fsyncs nothing,
 * leaves its index and producer snapshot under names no open trusts until the syncfs ran, then
 * renames them. A failed syncfs, or a stop cut before it, leaves the log as a crash does.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { open, readdir } from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { PRODUCER_SNAPSHOT_FILE } from "../../src/storage/producers/producer-snapshot.js";
import { StopSync } from "../../src/storage/stop-sync.js";
import type { SyncFs } from "../../src/storage/syncfs.js";
import { readAll, testConfig, withTempDir } from "./helpers.js";
import { producerBatch } from "./producers/producer-batches.js";

const CONFIG = testConfig({ segmentBytes: 1024 * 1024 });
const INDEX = "00000000000000000000.idx";
const BATCHES = 40;

/**
 * Counts every fsync and fdatasync the process makes while `body` runs: the descriptor calls
 * (named imports of node:fs follow the patched object after syncBuiltinESMExports) and FileHandle's.
 */
async function countingSyncs<T>(body: () => Promise<T>): Promise<{ result: T; syncs: number }> {
  let syncs = 0;
  const handle = await open(process.execPath, "r");
  const proto = Object.getPrototypeOf(handle) as Record<string, (...args: unknown[]) => unknown>;
  await handle.close();
  const saved = {
    fsync: fs.fsync,
    fdatasync: fs.fdatasync,
    fsyncSync: fs.fsyncSync,
    fdatasyncSync: fs.fdatasyncSync,
    sync: proto.sync!,
    datasync: proto.datasync!,
  };
  const counted =
    <F extends (...args: never[]) => unknown>(f: F) =>
    (...args: Parameters<F>): ReturnType<F> => {
      syncs++;
      return f(...args) as ReturnType<F>;
    };
  Object.assign(fs, {
    fsync: counted(saved.fsync),
    fdatasync: counted(saved.fdatasync),
    fsyncSync: counted(saved.fsyncSync),
    fdatasyncSync: counted(saved.fdatasyncSync),
  });
  proto.sync = function (this: unknown) {
    syncs++;
    return saved.sync.call(this);
  };
  proto.datasync = function (this: unknown) {
    syncs++;
    return saved.datasync.call(this);
  };
  syncBuiltinESMExports();
  try {
    const result = await body();
    return { result, syncs };
  } finally {
    Object.assign(fs, {
      fsync: saved.fsync,
      fdatasync: saved.fdatasync,
      fsyncSync: saved.fsyncSync,
      fdatasyncSync: saved.fdatasyncSync,
    });
    proto.sync = saved.sync;
    proto.datasync = saved.datasync;
    syncBuiltinESMExports();
  }
}

/** A log in `dir` holding BATCHES batches of producer 7 (two records each); returns it open and their bases. */
async function filled(dir: string): Promise<{ log: PartitionLog; bases: number[] }> {
  const log = await PartitionLog.open(dir, CONFIG);
  const bases: number[] = [];
  for (let i = 0; i < BATCHES; i++)
    bases.push((await log.append(producerBatch(7, 0, i * 2, 2, `v${i}`))).baseOffset);
  return { log, bases };
}

/** Opens `dir` again: every record is there, and the last batches' retries are found as duplicates. */
async function reopen(dir: string, bases: number[], stoppedCleanly: boolean): Promise<void> {
  const log = await PartitionLog.open(dir, CONFIG, undefined, {}, { stoppedCleanly });
  try {
    const end = bases.at(-1)! + 2;
    assert.equal(log.logEndOffset, end);
    assert.equal((await readAll(log)).length, end);
    for (let i = BATCHES - 5; i < BATCHES; i++) {
      const retry = await log.append(producerBatch(7, 0, i * 2));
      assert.equal(retry.duplicate, true, `batch ${i}'s retry`);
      assert.equal(retry.baseOffset, bases[i]);
    }
  } finally {
    await log.close();
  }
}

/** A syncfs that records what the directory held when it ran, failing from call `failFrom` on. */
function fakeSyncFs(dir: string, failFrom = Number.POSITIVE_INFINITY): { syncfs: SyncFs; seen: string[][] } {
  const seen: string[][] = [];
  const syncfs: SyncFs = async () => {
    seen.push((await readdir(dir)).sort());
    if (seen.length >= failFrom) throw new Error("EIO");
  };
  return { syncfs, seen };
}

test("closed with a StopSync a log fsyncs nothing; after the syncfs it renames its index and snapshot", async () => {
  await withTempDir(async (dir) => {
    const { log, bases } = await filled(dir);
    const { syncfs, seen } = fakeSyncFs(dir);
    const sync = (await StopSync.probe(dir, syncfs))!;
    const { syncs } = await countingSyncs(() => log.close({ sync }));
    assert.equal(syncs, 0, "no fsync in the close");
    assert.equal(log.closedCleanly, false, "not clean before the syncfs");
    const before = await readdir(dir);
    assert.ok(!before.includes(INDEX) && !before.includes(PRODUCER_SNAPSHOT_FILE), before.join(", "));
    assert.ok(before.includes(`${PRODUCER_SNAPSHOT_FILE}.tmp`) && before.includes(`${INDEX}.checkpoint`));

    assert.equal(await sync.run(), true);
    assert.equal(seen.length, 2, "the probe and the stop's syncfs");
    assert.deepEqual(seen[1], before.sort(), "the syncfs ran before the renames");
    assert.equal(log.closedCleanly, true);
    const after = await readdir(dir);
    assert.ok(after.includes(INDEX) && after.includes(PRODUCER_SNAPSHOT_FILE), after.join(", "));
    assert.ok(!after.includes(`${PRODUCER_SNAPSHOT_FILE}.tmp`) && !after.includes(`${INDEX}.checkpoint`));
    await reopen(dir, bases, true);
  });
});

test("the same close without a StopSync fsyncs the log's files itself", async () => {
  await withTempDir(async (dir) => {
    const { log } = await filled(dir);
    const { syncs } = await countingSyncs(() => log.close());
    assert.ok(syncs >= 3, `data, index and snapshot fsynced: ${syncs}`);
    assert.equal(log.closedCleanly, true);
  });
});

test("a failed syncfs leaves the log as a crash does, and its next open recovers it whole", async () => {
  await withTempDir(async (dir) => {
    const { log, bases } = await filled(dir);
    const { syncfs } = fakeSyncFs(dir, 2);
    const sync = (await StopSync.probe(dir, syncfs))!;
    await log.close({ sync });
    assert.equal(await sync.run(), false);
    assert.match(String(sync.failure), /EIO/);
    assert.equal(log.closedCleanly, false);
    const files = await readdir(dir);
    assert.ok(!files.includes(INDEX) && !files.includes(PRODUCER_SNAPSHOT_FILE), files.join(", "));
    assert.ok(!files.includes(`${PRODUCER_SNAPSHOT_FILE}.tmp`), "the unsynced snapshot removed");
    await reopen(dir, bases, false);
  });
});

test("a stop cut between its writes and its syncfs opens as after a crash", async () => {
  await withTempDir(async (dir) => {
    const { log, bases } = await filled(dir);
    const sync = (await StopSync.probe(dir, async () => {}))!;
    await log.close({ sync });
    // No run: the process ended here.
    await reopen(dir, bases, false);
    // And the next stop, a whole one, writes over the snapshot left under its temporary name.
    const again = await PartitionLog.open(dir, CONFIG);
    await again.close();
    assert.equal(again.closedCleanly, true);
    assert.ok(!(await readdir(dir)).includes(`${PRODUCER_SNAPSHOT_FILE}.tmp`));
    await reopen(dir, bases, true);
  });
});

test("no StopSync where syncfs fails at once (the probe)", async () => {
  assert.equal(
    await StopSync.probe("/", async () => {
      throw new Error("sync: unrecognized option '-f'");
    }),
    null,
  );
});

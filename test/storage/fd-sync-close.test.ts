/**
 * The group commit's fsync runs on the active segment's bare descriptor (FileOps.datasyncFd), which
 * the file handle's close does not wait for. A roll can make that segment a closed one, and
 * retention can then close its file while the fsync runs: the close must wait for it, or the fsync
 * would run on a closed descriptor (failing an append that was safely written) or on one reused
 * by another file (acknowledging an append that is not durable).
 */
import assert from "node:assert/strict";
import { fdatasync } from "node:fs";
import { type FileHandle, open, readdir } from "node:fs/promises";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Segment } from "../../src/storage/segment.js";
import { Counter, gate, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

/** Descriptors whose file handle's close was called; the handle's own `fd` reads -1 after that. */
const closedFds = new Set<number>();

/**
 * TestFileOps whose bare-descriptor fsyncs can be held, and which fail one whose descriptor's
 * handle was closed meanwhile (the descriptor may be another file's by then).
 */
class FdSyncOps extends TestFileOps {
  readonly fdSyncs = new Counter();
  /** While set, a bare-descriptor fsync waits for it before syncing. */
  fdGate: Promise<void> | null = null;

  datasyncFd(fd: number, done: (err: Error | null) => void): void {
    this.fdSyncs.bump();
    const sync = (): void => {
      if (closedFds.has(fd)) done(new Error(`descriptor ${fd} was closed under its fsync`));
      else fdatasync(fd, done);
    };
    if (this.fdGate === null) sync();
    else void this.fdGate.then(sync);
  }
}

/** Runs `body` with every file handle's close recorded in `closedFds`, and `entered` bumped per Segment.closeFile call. */
async function watchingCloses(body: (entered: Counter) => Promise<void>): Promise<void> {
  const probe = await open(import.meta.filename, "r");
  const handleProto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const close = handleProto.close;
  const closeFile = Segment.prototype.closeFile;
  const entered = new Counter();
  handleProto.close = function (this: FileHandle) {
    if (this.fd >= 0) closedFds.add(this.fd);
    return close.call(this);
  };
  Segment.prototype.closeFile = function (this: Segment) {
    entered.bump();
    return closeFile.call(this);
  };
  try {
    await body(entered);
  } finally {
    handleProto.close = close;
    Segment.prototype.closeFile = closeFile;
    closedFds.clear();
  }
}

async function walCount(dir: string): Promise<number> {
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).length;
}

test("a segment rolled and deleted while the group commit's fsync of its descriptor runs is closed only after that fsync", async () => {
  await withTempDir((dir) =>
    watchingCloses(async (closes) => {
      const ops = new FdSyncOps();
      const config = testConfig({
        segmentBytes: 4096,
        flush: "interval",
        flushIntervalMs: 60_000,
        retentionMs: -1,
        retentionBytes: -1,
      });
      const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops, retentionCheckMs: 0 });
      const held = gate();
      ops.fdGate = held.promise;
      const durable = log.append(makeBatch("d", 1), { durable: true });
      await ops.fdSyncs.reached(1);
      ops.fdGate = null;

      // Written meanwhile (acknowledged once written): enough to roll past the fsync's segment.
      let next = 1;
      while ((await walCount(dir)) < 2) {
        await log.append(makeBatch(`w${next}`, 3));
        next += 3;
      }
      log.updateConfig({ ...config, retentionBytes: 0 });
      const retention = log.enforceRetention();
      // Retention deletes the rolled segment: its close is asked for while the fsync is held.
      await closes.reached(1);
      held.open();
      assert.deepEqual(await durable, { baseOffset: 0, lastOffset: 0 }, "the held fsync ran on its own file");
      assert.equal(await retention, 1, "the rolled segment was deleted once its fsync ended");
      assert.deepEqual(await log.append(makeBatch("after", 1), { durable: true }), {
        baseOffset: next,
        lastOffset: next,
      });
      assert.deepEqual(offsetsOf(await readAll(log)), range(log.logStartOffset, next + 1));
      await log.close();
    }),
  );
});

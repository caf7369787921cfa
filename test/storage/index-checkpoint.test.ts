import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { cp, readFile, stat, unlink, watch } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

const CHECKPOINT = "00000000000000000000.idx.checkpoint";

/**
 * Watches `dir` from now on and resolves with the first checkpoint written that `accept` takes;
 * each is read whole when its write is seen (a later one may extend it first).
 */
function checkpointWritten(dir: string, accept: (bytes: Buffer) => boolean): Promise<Buffer> {
  return (async () => {
    for await (const event of watch(dir)) {
      if (event.filename !== CHECKPOINT) continue;
      const bytes = await readFile(join(dir, CHECKPOINT)).catch(() => null);
      if (bytes !== null && accept(bytes)) return bytes;
    }
    throw new Error("the watch of the log's directory ended");
  })();
}

/** A log with an index entry every few batches and its quiet check (which writes the checkpoint) every 20 ms. */
function openQuickLog(dir: string): Promise<PartitionLog> {
  return PartitionLog.open(dir, testConfig({ indexIntervalBytes: 300 }), undefined, { trimIntervalMs: 20 });
}

test("a log appended to writes its active segment's index checkpoint on its quiet check; a clean stop writes the whole index", {
  timeout: 20_000,
}, async () => {
  await withTempDir(async (dir) => {
    const log = await openQuickLog(dir);
    // The first quiet check may come after only the first append or two (a loaded machine): wait
    // for one that holds more than one entry, as every check after the appends does.
    const written = checkpointWritten(dir, (bytes) => bytes.length > 16);
    for (let i = 0; i < 30; i++) await log.append(makeBatch(`k${i}`, 3, Date.now()));
    const checkpoint = await written;
    assert.ok(checkpoint.length > 16 && checkpoint.length % 16 === 0, `${checkpoint.length} bytes`);
    await log.close();
    const index = await readFile(join(dir, "00000000000000000000.idx"));
    assert.deepEqual(
      index.subarray(0, checkpoint.length),
      checkpoint,
      "the checkpoint is a prefix of the index",
    );
  });
});

test("a log cut back (a follower's truncation) discards its index checkpoint, whose entries name batches that are gone", {
  timeout: 20_000,
}, async () => {
  await withTempDir(async (dir) => {
    const log = await openQuickLog(dir);
    const written = checkpointWritten(dir, () => true);
    for (let i = 0; i < 30; i++) await log.append(makeBatch(`k${i}`, 3, Date.now()));
    await written;
    assert.equal(await log.truncateTo(3), 3);
    assert.equal(existsSync(join(dir, CHECKPOINT)), false, "the checkpoint went with the cut");
    await log.close();
  });
});

test("later checkpoints of a segment append to the same file (no new file each time); a lost file is written whole again", {
  timeout: 30_000,
}, async () => {
  await withTempDir(async (dir) => {
    const log = await openQuickLog(dir);
    const path = join(dir, CHECKPOINT);
    const first = checkpointWritten(dir, (bytes) => bytes.length >= 2 * 16);
    for (let i = 0; i < 10; i++) await log.append(makeBatch(`a${i}`, 3, Date.now()));
    const before = await first;
    const inode = (await stat(path)).ino;
    const longer = checkpointWritten(dir, (bytes) => bytes.length >= before.length + 4 * 16);
    for (let i = 0; i < 20; i++) await log.append(makeBatch(`b${i}`, 3, Date.now()));
    const after = await longer;
    assert.equal((await stat(path)).ino, inode, "the same file, written in place");
    assert.deepEqual(after.subarray(0, before.length), before, "the earlier entries kept");
    assert.equal(after.length % 16, 0);

    // Gone (removed by hand): the next append to it fails, and the one after writes it whole.
    await unlink(path);
    const again = checkpointWritten(dir, (bytes) => bytes.length > after.length);
    for (let i = 0; i < 40; i++) {
      await log.append(makeBatch(`c${i}`, 3, Date.now()));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const rewritten = await again;
    assert.deepEqual(rewritten.subarray(0, after.length), after, "written whole from the first entry");
    await log.close();
    const index = await readFile(join(dir, "00000000000000000000.idx"));
    assert.deepEqual(index.subarray(0, rewritten.length), rewritten, "a prefix of the index");
  });
});

test("after a clean stop the checkpoint the open kept is written over in place, never left empty", {
  timeout: 30_000,
}, async () => {
  await withTempDir(async (dir) => {
    const first = await openQuickLog(dir);
    for (let i = 0; i < 20; i++) await first.append(makeBatch(`a${i}`, 3, Date.now()));
    await first.close();
    const log = await openQuickLog(dir); // the clean stop's .idx becomes the checkpoint
    const path = join(dir, CHECKPOINT);
    const kept = await readFile(path);
    const inode = (await stat(path)).ino;
    const longer = checkpointWritten(dir, (bytes) => bytes.length > kept.length);
    for (let i = 0; i < 20; i++) await log.append(makeBatch(`b${i}`, 3, Date.now()));
    const after = await longer;
    assert.equal((await stat(path)).ino, inode, "the same file");
    assert.deepEqual(after.subarray(0, kept.length), kept, "its entries kept");
    await log.close();
  });
});

test("a clean stop makes the .idx from the checkpoint (the same file, fsynced and renamed); without one it is written whole", {
  timeout: 30_000,
}, async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "log");
    const log = await openQuickLog(dir);
    const written = checkpointWritten(dir, (bytes) => bytes.length > 16);
    for (let i = 0; i < 30; i++) await log.append(makeBatch(`k${i}`, 3, Date.now()));
    await written;
    const inode = (await stat(join(dir, CHECKPOINT))).ino;
    for (let i = 30; i < 40; i++) await log.append(makeBatch(`k${i}`, 3, Date.now()));
    await log.close();
    const idx = join(dir, "00000000000000000000.idx");
    assert.equal(existsSync(join(dir, CHECKPOINT)), false, "renamed");
    assert.equal((await stat(idx)).ino, inode, "the checkpoint's file");

    // The same log scanned from scratch (no index, no checkpoint) builds the same index, which its
    // clean stop, with no checkpoint file to bring up to date, writes whole.
    const copy = join(root, "copy");
    await cp(dir, copy, { recursive: true });
    await unlink(join(copy, "00000000000000000000.idx"));
    await (await PartitionLog.open(copy, testConfig({ indexIntervalBytes: 300 }))).close();
    const whole = await readFile(join(copy, "00000000000000000000.idx"));
    assert.ok(whole.length >= 5 * 16, `${whole.length} bytes`);
    assert.deepEqual(await readFile(idx), whole);
  });
});

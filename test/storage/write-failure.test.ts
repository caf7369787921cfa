import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { gate, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

function isStorageError(err: unknown): boolean {
  return err instanceof ConchError && err.code === ErrorCode.STORAGE_ERROR;
}

for (const kind of ["short write", "ENOSPC"] as const) {
  test(`a failed write (${kind}) fails its appends and those behind it; the log stays consistent`, async () => {
    await withTempDir(async (dir) => {
      const ops = new TestFileOps();
      const log = await PartitionLog.open(dir, testConfig(), undefined, { fileOps: ops, tailCacheBytes: 0 });
      await log.append(makeBatch("ok", 4));
      const goodBytes = log.sizeBytes;

      const held = gate();
      ops.writeGate = held.promise;
      if (kind === "short write") ops.shortWriteNext = true;
      else ops.failNext = Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
      const carried = [log.append(makeBatch("x", 3)), log.append(makeBatch("y", 3))];
      await new Promise((resolve) => setImmediate(resolve)); // the write is now in flight
      const behind = log.append(makeBatch("z", 3)); // queued behind it, offsets assume it
      assert.equal(log.logEndOffset, 13);
      held.open();
      ops.writeGate = null;
      for (const p of [...carried, behind]) await assert.rejects(p, isStorageError);

      assert.equal(log.logEndOffset, 4, "offset assignment rewinds to the written end");
      assert.equal(log.highWatermark, 4);
      assert.equal(log.sizeBytes, goodBytes);
      assert.equal((await stat(join(dir, "00000000000000000000.wal"))).size, goodBytes, "file cut back");

      assert.deepEqual(await log.append(makeBatch("later", 2)), { baseOffset: 4, lastOffset: 5 });
      const records = await readAll(log);
      assert.deepEqual(offsetsOf(records), range(0, 6));
      assert.deepEqual(
        records.map((r) => r.value),
        ["ok-0", "ok-1", "ok-2", "ok-3", "later-0", "later-1"],
      );
      await log.close();

      const again = await PartitionLog.open(dir, testConfig());
      assert.deepEqual(await readAll(again), records);
      await again.close();
    });
  });
}

test("a failed fsync fails the waiting appends and every later one", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "sync" }), undefined, { fileOps: ops });
    ops.datasync = async () => {
      throw Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
    };
    await assert.rejects(log.append(makeBatch("a", 1)), isStorageError);
    await assert.rejects(log.append(makeBatch("b", 1)), isStorageError);
    await log.close();
  });
});

/** Fails every fsync of the bare descriptor, by its callback or by throwing at the call. */
class FailingFdSyncOps extends TestFileOps {
  constructor(readonly thrown: boolean) {
    super();
  }

  datasyncFd(_fd: number, done: (err: Error | null) => void): void {
    const err = Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
    if (this.thrown) throw err;
    setImmediate(() => done(err));
  }
}

test("a failed fsync of the bare descriptor, told or thrown, fails the waiting appends and every later one", async () => {
  for (const thrown of [false, true]) {
    await withTempDir(async (dir) => {
      const ops = new FailingFdSyncOps(thrown);
      const log = await PartitionLog.open(dir, testConfig({ flush: "sync" }), undefined, { fileOps: ops });
      await assert.rejects(log.append(makeBatch("a", 1)), isStorageError);
      await assert.rejects(log.append(makeBatch("b", 1)), isStorageError);
      await log.close();
    });
  }
});

test("the appends of a failed write are failed only once the file is cut back", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig(), undefined, { fileOps: ops, tailCacheBytes: 0 });
    await log.append(makeBatch("ok", 2));
    const goodBytes = log.sizeBytes;
    const cut = gate();
    ops.truncateGate = cut.promise;
    ops.shortWriteNext = true;
    let settled = false;
    const failing = log.append(makeBatch("x", 3)).then(
      () => assert.fail("the append should fail"),
      (err: unknown) => {
        settled = true;
        assert.ok(isStorageError(err));
      },
    );
    // Give the write every chance to fail and, wrongly, reject before the file is cut back.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, "not failed while the file is still being cut back");
    cut.open();
    await failing;
    assert.equal((await stat(join(dir, "00000000000000000000.wal"))).size, goodBytes, "file cut back");
    await log.close();
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

function hasCode(code: number): (err: unknown) => boolean {
  return (err) => err instanceof ConchError && err.code === code;
}

test("a batch that fails validation stores nothing, and later appends are unaffected", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ maxBatchBytes: 1024 }), undefined, {
      fileOps: ops,
    });
    const good = makeBatch("good", 2);
    const corrupt = Buffer.from(makeBatch("bad", 2));
    corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 1;
    const tooBig = makeBatch("x".repeat(600), 2);
    const caller = Buffer.concat([good, corrupt]);
    const snapshot = Buffer.from(caller);

    await assert.rejects(log.append(corrupt), hasCode(ErrorCode.CORRUPT_BATCH));
    await assert.rejects(
      log.append(caller),
      hasCode(ErrorCode.CORRUPT_BATCH),
      "one bad batch rejects the request",
    );
    await assert.rejects(log.append(tooBig), hasCode(ErrorCode.BATCH_TOO_LARGE));
    await assert.rejects(log.append(Buffer.alloc(0)), hasCode(ErrorCode.INVALID_BATCH));
    await assert.rejects(log.append(good.subarray(0, good.length - 1)), hasCode(ErrorCode.INVALID_BATCH));
    await settle();
    assert.equal(log.logEndOffset, 0);
    assert.equal(log.sizeBytes, 0);
    assert.equal(ops.writes.count, 0, "nothing was written");
    assert.deepEqual(caller, snapshot, "the caller's buffer is untouched");

    assert.deepEqual(await log.append(good), { baseOffset: 0, lastOffset: 1 });
    assert.equal(good.readUInt32BE(13), 0, "the caller's buffer is not stamped");
    await log.close();
  });
});

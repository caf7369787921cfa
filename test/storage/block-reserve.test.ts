import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { extendReserve, FIRST_RESERVE_BYTES, RESERVE_CHUNK_BYTES } from "../../src/storage/block-reserve.js";
import { defaultFileOps, type FileOps } from "../../src/storage/file-ops.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Segment } from "../../src/storage/segment.js";
import { testConfig, withTempDir } from "./helpers.js";

const MiB = 1024 * 1024;

/** A batch of `count` records of `size` bytes each. */
function bigBatch(count: number, size: number): Buffer {
  const b = new BatchBuilder({ slabBytes: count * (size + 64) + 4096 });
  const value = Buffer.alloc(size, 120);
  for (let i = 0; i < count; i++) b.add(value, null, Date.now());
  return Buffer.from(b.finish());
}

async function allocated(path: string): Promise<number> {
  return (await stat(path)).blocks * 512;
}

test("a new partition reserves no disk until it holds 1 MiB, then at most four times its data", async () => {
  await withTempDir(async (dir) => {
    const segmentBytes = 256 * MiB;
    const reserved: number[] = [];
    const ops: FileOps = {
      ...defaultFileOps,
      preallocate(path, bytes, offset) {
        reserved.push(bytes);
        return defaultFileOps.preallocate(path, bytes, offset);
      },
    };
    const config = testConfig({ segmentBytes, maxBatchBytes: 8 * MiB });
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops });
    try {
      const path = join(dir, "00000000000000000000.wal");
      assert.equal((await stat(path)).size, segmentBytes, "the file is segmentBytes long from the start");
      const idle = await allocated(path);
      assert.ok(idle <= 64 * 1024, `an idle partition holds ${idle} bytes`);
      await log.append(bigBatch(1, 1024));
      await log.flush();
      // Not a 16 MiB chunk at the first data: 10,000 partitions with a little data each held 160 GB.
      assert.deepEqual(reserved, [], "a partition with 1 KiB reserves nothing");
      let written = 1024;
      for (let i = 0; i < 10; i++) {
        await log.append(bigBatch(16, 64 * 1024));
        written += MiB;
      }
      await log.flush();
      assert.ok(reserved.length >= 2, `reservations: ${reserved.join(", ")}`);
      assert.equal(reserved[0], FIRST_RESERVE_BYTES);
      for (const r of reserved) assert.ok(r <= 4 * written, `reserved ${r} bytes for ${written}`);
    } finally {
      await log.close();
    }
  });
});

test("extendReserve: doubles once writes pass half the reservation, one at a time, never past the segment", async () => {
  const calls: [number, number][] = [];
  let finish: ((ok: boolean) => void) | null = null;
  const ops = {
    preallocate(_path: string, bytes: number, offset = 0): Promise<boolean> {
      calls.push([offset, bytes]);
      return new Promise<boolean>((resolve) => {
        finish = resolve;
      });
    },
  } as unknown as FileOps;
  const chunk = RESERVE_CHUNK_BYTES;
  const segmentBytes = 6 * chunk;
  const seg = new Segment("/nowhere", 0, 0);
  seg.reservedTo = chunk;
  seg.size = chunk / 2 - 1;
  extendReserve(seg, ops, segmentBytes);
  assert.deepEqual(calls, [], "more than half the reservation still ahead");
  seg.size = chunk / 2 + 1;
  extendReserve(seg, ops, segmentBytes);
  extendReserve(seg, ops, segmentBytes);
  assert.deepEqual(calls, [[chunk / 2 + 1, 2 * chunk]], "the new range only, once");
  finish!(true);
  await seg.preallocation;
  assert.equal(seg.reservedTo, 2 * chunk);
  seg.size = 2 * chunk;
  extendReserve(seg, ops, segmentBytes);
  finish!(true);
  await seg.preallocation;
  seg.size = 3 * chunk;
  extendReserve(seg, ops, segmentBytes);
  assert.deepEqual(calls.slice(1), [
    [2 * chunk, 4 * chunk],
    [3 * chunk, segmentBytes],
  ]);
  finish!(false);
  await seg.preallocation;
  extendReserve(seg, ops, segmentBytes);
  assert.equal(calls.length, 3, "a refused reservation is not retried");
});

/**
 * File ops whose reservations wait in a queue that never moves, as thousands of others' can in the
 * shared helper: each resolves false when its signal withdraws it, and never otherwise.
 */
function stuckQueueOps(): { ops: FileOps; asked: number[]; withdrawn: number[] } {
  const asked: number[] = [];
  const withdrawn: number[] = [];
  const ops: FileOps = {
    ...defaultFileOps,
    preallocate(_path, bytes, _offset, signal) {
      asked.push(bytes);
      return new Promise<boolean>((resolve) => {
        const withdraw = () => {
          withdrawn.push(bytes);
          resolve(false);
        };
        if (signal?.aborted) withdraw();
        else signal?.addEventListener("abort", withdraw);
      });
    },
  };
  return { ops, asked, withdrawn };
}

test("a log opened with 1 MiB or more reserves nothing until 1 MiB more is written to it", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 64 * MiB, maxBatchBytes: 8 * MiB });
    const first = await PartitionLog.open(dir, config);
    for (let i = 0; i < 3; i++) await first.append(bigBatch(16, 64 * 1024));
    await first.close();
    const reserved: number[] = [];
    const ops: FileOps = {
      ...defaultFileOps,
      preallocate(path, bytes, offset, signal) {
        reserved.push(bytes);
        return defaultFileOps.preallocate(path, bytes, offset, signal);
      },
    };
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops });
    try {
      await log.append(bigBatch(1, 1024));
      await log.flush();
      assert.deepEqual(reserved, [], "3 MiB held, a little written since the open: nothing reserved");
      await log.append(bigBatch(16, 64 * 1024));
      await log.flush();
      assert.equal(reserved.length, 1, `reservations: ${reserved.join(", ")}`);
      assert.ok(reserved[0]! >= 2 * 4 * MiB, `reserved up to ${reserved[0]} bytes for 4 MiB`);
    } finally {
      await log.close();
    }
  });
});

test("a closing log withdraws a reservation still waiting its turn instead of waiting for it", async () => {
  await withTempDir(async (dir) => {
    const { ops, asked, withdrawn } = stuckQueueOps();
    const config = testConfig({ segmentBytes: 64 * MiB, maxBatchBytes: 8 * MiB });
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops });
    for (let i = 0; i < 2; i++) await log.append(bigBatch(16, 64 * 1024));
    await log.flush();
    assert.deepEqual(asked, [FIRST_RESERVE_BYTES], "2 MiB written: one reservation asked");
    await log.close();
    assert.deepEqual(withdrawn, [FIRST_RESERVE_BYTES]);
    // Cut to its data as ever: the next open finds every record.
    const path = join(dir, "00000000000000000000.wal");
    assert.ok((await stat(path)).size < 3 * MiB, "the preallocated tail is cut");
    const again = await PartitionLog.open(dir, config);
    try {
      assert.equal(again.logEndOffset, 32);
    } finally {
      await again.close();
    }
  });
});

test("a roll neither waits for the prepared segment's queued reservation nor for the old segment's", async () => {
  await withTempDir(async (dir) => {
    const { ops, asked, withdrawn } = stuckQueueOps();
    const segmentBytes = 4 * MiB;
    const config = testConfig({ segmentBytes, maxBatchBytes: 8 * MiB });
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: ops });
    try {
      // 6 MiB into segments of 4: one roll at least, with reservations asked and never answered.
      for (let i = 0; i < 6; i++) await log.append(bigBatch(16, 64 * 1024));
      await log.flush();
      assert.equal(log.logEndOffset, 96);
      assert.ok(asked.length >= 1, `reservations asked: ${asked.join(", ")}`);
      assert.ok(withdrawn.length >= 1, "the roll withdrew what it would have waited for");
    } finally {
      await log.close();
    }
    assert.equal(withdrawn.length, asked.length, "every reservation asked was withdrawn");
  });
});

import assert from "node:assert/strict";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { PREALLOCATE_MIN_BYTES } from "../../src/storage/file-ops.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

async function walFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
}

test("offsets are contiguous across segment rolls, in call order", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 4096, indexIntervalBytes: 256 }));
    const pending = [];
    for (let i = 0; i < 300; i++) pending.push(log.append(makeBatch(`r${i}`, 1 + (i % 4))));
    // Offsets are assigned synchronously, before any write completes.
    assert.equal(log.logEndOffset, pending.length === 300 ? expectedEnd(300) : -1);
    const acks = await Promise.all(pending);
    let next = 0;
    for (const [i, ack] of acks.entries()) {
      assert.equal(ack.baseOffset, next, `append ${i}`);
      assert.equal(ack.lastOffset, next + (i % 4));
      next = ack.lastOffset + 1;
    }
    assert.equal(log.highWatermark, next);
    const files = await walFiles(dir);
    assert.ok(files.length > 5, `expected several segments, got ${files.length}`);
    assert.equal(files[0], "00000000000000000000.wal");
    const records = await readAll(log, 700);
    assert.deepEqual(offsetsOf(records), range(0, next));
    assert.equal(records[5]?.value, "r2-2");
    // Every read from an arbitrary offset starts with the batch holding it.
    for (const offset of [0, 1, 17, 99, 250, next - 1]) {
      const { records: bytes } = await log.read(offset, 1);
      const first = bytes.readUInt32BE(9) * 2 ** 32 + bytes.readUInt32BE(13);
      const count = bytes.readUInt32BE(25);
      assert.ok(
        first <= offset && offset < first + count,
        `read(${offset}) began at batch ${first}+${count}`,
      );
    }
    await log.close();
  });
});

function expectedEnd(appends: number): number {
  let n = 0;
  for (let i = 0; i < appends; i++) n += 1 + (i % 4);
  return n;
}

test("reopen reads everything back; closed segments get indexes, files are cut to their data", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 8192, indexIntervalBytes: 300 });
    const log = await PartitionLog.open(dir, config);
    for (let i = 0; i < 200; i++) await log.append(makeBatch(`v${i}`, 2));
    const before = await readAll(log);
    const size = log.sizeBytes;
    await log.close();

    const names = await readdir(dir);
    const wals = names.filter((n) => n.endsWith(".wal")).sort();
    const idxs = names.filter((n) => n.endsWith(".idx")).sort();
    // After a clean close every segment has an index, the active one included.
    assert.deepEqual(
      idxs,
      wals.map((n) => n.replace(".wal", ".idx")),
    );
    assert.ok(!names.some((n) => n.includes("prepared") || n.endsWith(".tmp")), names.join(","));
    let total = 0;
    for (const name of wals) total += (await stat(join(dir, name))).size;
    assert.equal(total, size, "no preallocated tail left after a clean close");

    const again = await PartitionLog.open(dir, config);
    assert.equal(again.logEndOffset, 400);
    assert.equal(again.highWatermark, 400);
    assert.equal(again.sizeBytes, size);
    assert.deepEqual(await readAll(again), before);
    const ack = await again.append(makeBatch("after", 2));
    assert.deepEqual(ack, { baseOffset: 400, lastOffset: 401 });
    await again.close();
  });
});

test("the active segment is preallocated to segmentBytes while open", async () => {
  await withTempDir(async (dir) => {
    const segmentBytes = PREALLOCATE_MIN_BYTES;
    const log = await PartitionLog.open(dir, testConfig({ segmentBytes }));
    await log.append(makeBatch("x", 10));
    const path = join(dir, "00000000000000000000.wal");
    const st = await stat(path);
    assert.equal(st.size, segmentBytes);
    // fallocate(1) is tried; on file systems that support it the blocks are really reserved.
    if (st.blocks * 512 < segmentBytes) console.log(`# note: blocks not reserved (${st.blocks * 512} bytes)`);
    await log.close();
    assert.ok((await stat(path)).size < 4096);
  });
});

test("read: empty at the high watermark, out of range outside [start, hw], one whole batch at least", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const empty = await log.read(0, 100);
    assert.equal(empty.records.length, 0);
    assert.equal(empty.highWatermark, 0);
    const big = makeBatch("big", 50);
    await log.append(big);
    await log.append(makeBatch("next", 1));
    const r = await log.read(10, 10);
    assert.equal(r.records.length, big.length, "one whole batch even though maxBytes is smaller");
    const atHw = await log.read(51, 1000);
    assert.equal(atHw.records.length, 0);
    assert.equal(atHw.highWatermark, 51);
    for (const bad of [-1, 52, 1000, 0.5]) {
      await assert.rejects(log.read(bad, 100), (err: unknown) => {
        return err instanceof ConchError && err.code === ErrorCode.OFFSET_OUT_OF_RANGE;
      });
    }
    await log.close();
  });
});

test("reads give the same bytes from the tail cache and from the file", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 16 * 1024, indexIntervalBytes: 200 });
    const cached = await PartitionLog.open(dir, config, undefined, {
      tailCacheBytes: 1 << 20,
      appendChunkBytes: 4096,
    });
    for (let i = 0; i < 150; i++) await cached.append(makeBatch(`c${i}`, 1 + (i % 5)));
    const fromCache = [];
    for (let o = 0; o < cached.highWatermark; o += 7) fromCache.push((await cached.read(o, 900)).records);
    await cached.close();
    const uncached = await PartitionLog.open(dir, config, undefined, { tailCacheBytes: 0 });
    let i = 0;
    for (let o = 0; o < uncached.highWatermark; o += 7) {
      assert.deepEqual((await uncached.read(o, 900)).records, fromCache[i++], `offset ${o}`);
    }
    await uncached.close();
  });
});

test("readNow answers from the tail cache exactly as a read from the file does, and defers everything else", async () => {
  await withTempDir(async (dir) => {
    const config = testConfig({ segmentBytes: 8 * 1024, indexIntervalBytes: 200 });
    // A cache smaller than the log: the oldest batches are only in the file.
    const log = await PartitionLog.open(dir, config, undefined, {
      tailCacheBytes: 4096,
      appendChunkBytes: 2048,
    });
    for (let i = 0; i < 120; i++) await log.append(makeBatch(`n${i}`, 1 + (i % 4)));
    const hw = log.highWatermark;
    const hits = new Map<number, Buffer>();
    let misses = 0;
    for (let o = 0; o < hw; o++) {
      const now = log.readNow(o, 700);
      if (now === undefined) misses++;
      else hits.set(o, now.records);
    }
    assert.ok(hits.size > 0 && misses > 0, `${hits.size} offsets from the cache, ${misses} from the file`);
    // The most recent batch is always cached.
    assert.notEqual(log.readNow(hw - 1, 700), undefined);
    assert.deepEqual(log.readNow(hw, 700)?.records.length, 0);
    assert.equal(log.readNow(hw + 1, 700), undefined);
    await assert.rejects(log.read(hw + 1, 700), /not in the log/);
    await log.close();
    const uncached = await PartitionLog.open(dir, config, undefined, { tailCacheBytes: 0 });
    for (const [o, records] of hits)
      assert.deepEqual(records, (await uncached.read(o, 700)).records, `offset ${o}`);
    await uncached.close();
  });
});

test("read results stay intact while later appends reuse the append chunks", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 1 << 20 }), undefined, {
      tailCacheBytes: 8192,
      appendChunkBytes: 4096,
    });
    await log.append(makeBatch("first", 20));
    const { records } = await log.read(0, 1 << 20);
    const copy = Buffer.from(records);
    for (let i = 0; i < 200; i++) await log.append(makeBatch(`later${i}`, 20));
    assert.deepEqual(records, copy);
    await log.close();
  });
});

test("offsetForTimestamp finds the first record at or after a time", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 4096, indexIntervalBytes: 200 }));
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 100; i++) await log.append(makeBatch(`t${i}`, 2, t0 + i * 10));
    assert.equal(await log.offsetForTimestamp(0), 0);
    assert.equal(await log.offsetForTimestamp(t0), 0);
    assert.equal(await log.offsetForTimestamp(t0 + 1), 2);
    assert.equal(await log.offsetForTimestamp(t0 + 500), 100);
    assert.equal(await log.offsetForTimestamp(t0 + 990), 198);
    assert.equal(await log.offsetForTimestamp(t0 + 991), null);
    await log.close();
  });
});

test("appends after close are refused; close is idempotent; delete removes the directory", async () => {
  await withTempDir(async (dir) => {
    const sub = join(dir, "p0");
    const log = await PartitionLog.open(sub, testConfig());
    const pending = log.append(makeBatch("a", 1));
    const closing = log.close();
    await assert.rejects(log.append(makeBatch("b", 1)), (err: unknown) => {
      return err instanceof ConchError && err.code === ErrorCode.SHUTTING_DOWN;
    });
    assert.deepEqual(await pending, { baseOffset: 0, lastOffset: 0 }, "appends queued before close complete");
    await closing;
    await log.close();
    const again = await PartitionLog.open(sub, testConfig());
    assert.equal(again.logEndOffset, 1);
    await again.delete();
    await assert.rejects(stat(sub));
  });
});

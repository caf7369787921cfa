import assert from "node:assert/strict";
import { cp, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, recordSize } from "../../src/format/batch-header.js";
import { FlushQueue } from "../../src/storage/flush-queue.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { searchLimit } from "../../src/storage/recovery.js";
import { TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 });

/** Fills a log with `appends` batches of 3 records and closes it; returns the sorted segment names. */
async function fill(dir: string, appends: number): Promise<string[]> {
  const log = await PartitionLog.open(dir, config);
  for (let i = 0; i < appends; i++) await log.append(makeBatch(`v${i}`, 3));
  await log.close();
  return (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
}

/**
 * What a crash before the first index checkpoint leaves of the last segment's index: nothing (a
 * clean close writes one, which the open would trust instead of scanning the segment, and the
 * open keeps it as the checkpoint, which the open after a crash scans from).
 */
async function asAfterCrash(lastPath: string): Promise<void> {
  await unlink(lastPath.replace(/\.wal$/, ".idx")).catch(() => {});
  await unlink(lastPath.replace(/\.wal$/, ".idx.checkpoint")).catch(() => {});
}

/** Start positions and base offsets of the batches in a segment file. */
function batchesOf(file: Buffer): { at: number; base: number }[] {
  const out = [];
  for (let at = 0; at < file.length; at += recordSize(file, at))
    out.push({ at, base: batchBaseOffset(file, at) });
  return out;
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("a last segment cut at any byte inside its last batch reopens at the last whole batch", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 60);
    const lastPath = join(dir, wals.at(-1)!);
    const original = await readFile(lastPath);
    const batches = batchesOf(original);
    const last = batches.at(-1)!;
    const end = last.base + 3;
    for (let cut = last.at; cut < original.length; cut++) {
      // The append below may roll to a new segment: start every round from the original files.
      for (const name of await readdir(dir))
        if (!wals.includes(name) && name.endsWith(".wal")) await unlink(join(dir, name));
      await writeFile(lastPath, original.subarray(0, cut));
      const log = await PartitionLog.open(dir, config);
      assert.equal(log.logEndOffset, last.base, `cut at ${cut}`);
      assert.equal(log.highWatermark, last.base);
      if (cut === last.at + 1 || cut === original.length - 1) {
        assert.deepEqual(offsetsOf(await readAll(log)), range(0, last.base));
      }
      const ack = await log.append(makeBatch("again", 1));
      assert.equal(ack.baseOffset, last.base);
      await log.close();
    }
    await writeFile(lastPath, original);
    const whole = await PartitionLog.open(dir, config);
    assert.equal(whole.logEndOffset, end);
    await whole.close();
  });
});

test("a flipped byte in the last segment: its last batch is a torn tail and cut, an earlier one is quarantined", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 60);
    const lastPath = join(dir, wals.at(-1)!);
    const original = await readFile(lastPath);
    const batches = batchesOf(original);
    const end = batches.at(-1)!.base + 3;
    const random = mulberry32(20240611);
    for (let trial = 0; trial < 25; trial++) {
      const k = batches.length - 1 - Math.floor(random() * Math.min(4, batches.length));
      const target = batches[k]!;
      const size = (batches[k + 1]?.at ?? original.length) - target.at;
      const pos = target.at + Math.floor(random() * size);
      const damaged = Buffer.from(original);
      damaged[pos] = damaged[pos]! ^ (1 + Math.floor(random() * 255));
      await writeFile(lastPath, damaged);
      await asAfterCrash(lastPath);
      const log = await PartitionLog.open(dir, config);
      const what = `trial ${trial}: byte ${pos - target.at} of batch ${k}`;
      if (k === batches.length - 1 && (pos < target.at + 9 || pos >= target.at + 17)) {
        assert.equal(log.logEndOffset, target.base, what);
        assert.deepEqual(offsetsOf(await readAll(log)), range(0, target.base));
        await log.close();
        assert.equal((await stat(lastPath)).size, target.at, "the file is cut at the damaged batch");
      } else {
        // Good batches follow (or only the unchecked base offset changed): nothing is cut.
        assert.equal(log.logEndOffset, end, what);
        const q = log.quarantined();
        assert.equal(q.length, 1, what);
        assert.equal(q[0]!.firstOffset, target.base, what);
        assert.equal(q[0]!.lastOffset, target.base + 2, what);
        await assert.rejects(log.read(target.base, 1), /quarantined/);
        if (k + 1 < batches.length) {
          const { records } = await log.read(target.base + 3, 1);
          assert.equal(batchBaseOffset(records, 0), target.base + 3, what);
        }
        await log.close();
        assert.equal((await stat(lastPath)).size, original.length, "nothing is cut");
      }
    }
  });
});

test("a deleted index is rebuilt, and reads stay right", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 80);
    assert.ok(wals.length >= 3);
    const idx = join(dir, wals[1]!.replace(".wal", ".idx"));
    const before = await readFile(idx);
    await unlink(idx);
    const log = await PartitionLog.open(dir, config);
    assert.deepEqual(await readFile(idx), before, "the rebuilt index equals the one written at roll");
    assert.deepEqual(offsetsOf(await readAll(log, 200)), range(0, 240));
    await log.close();
  });
});

test("an index that disagrees with its data is not trusted", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 80);
    const idx = join(dir, wals[0]!.replace(".wal", ".idx"));
    const good = await readFile(idx);
    const damaged = [
      Buffer.concat([good, Buffer.from([0, 0, 0, 99, 0, 0, 0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0])]), // points past the file
      Buffer.concat([good.subarray(0, 16), Buffer.from([0, 0, 0, 1, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0])]), // wrong offset
      good.subarray(0, 20), // not whole entries
      Buffer.alloc(0),
    ];
    for (const bytes of damaged) {
      await writeFile(idx, bytes);
      const log = await PartitionLog.open(dir, config);
      assert.deepEqual(offsetsOf(await readAll(log, 200)), range(0, 240));
      await log.close();
      assert.deepEqual(await readFile(idx), good);
    }
  });
});

test("corruption in a middle segment is quarantined; that segment and every later one are kept", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 120);
    assert.ok(wals.length >= 4);
    const middle = join(dir, wals[1]!);
    const bytes = await readFile(middle);
    const batches = batchesOf(bytes);
    const bad = batches[2]!;
    bytes[bad.at + 60] = bytes[bad.at + 60]! ^ 0xff;
    await writeFile(middle, bytes);
    await unlink(middle.replace(".wal", ".idx")); // a rescan at open finds a flip inside a segment
    const log = await PartitionLog.open(dir, config);
    assert.equal(log.logEndOffset, 360);
    assert.deepEqual(
      log.quarantined().map((r) => [r.segment, r.firstOffset, r.lastOffset]),
      [[wals[1], bad.base, bad.base + 2]],
    );
    const left = (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
    assert.deepEqual(left, wals);
    log.updateConfig({ ...log.config, corruptData: "skip" });
    const records = offsetsOf(await readAll(log));
    assert.deepEqual(records, [...range(0, bad.base), ...range(bad.base + 3, 360)]);
    const ack = await log.append(makeBatch("resume", 2));
    assert.equal(ack.baseOffset, 360);
    await log.close();
  });
});

test("a copy taken while the log is open (a crash) recovers without the preallocated zeros", async () => {
  await withTempDir(async (dir) => {
    const live = join(dir, "live");
    const copy = join(dir, "copy");
    const log = await PartitionLog.open(live, testConfig({ segmentBytes: 64 * 1024 }));
    for (let i = 0; i < 50; i++) await log.append(makeBatch(`z${i}`, 3));
    await cp(live, copy, { recursive: true });
    await log.close();
    const wal = join(copy, "00000000000000000000.wal");
    assert.equal((await stat(wal)).size, 64 * 1024, "the copy has the zero-filled preallocated tail");
    const recovered = await PartitionLog.open(copy, testConfig({ segmentBytes: 64 * 1024 }));
    assert.equal(recovered.logEndOffset, 150);
    assert.deepEqual(offsetsOf(await readAll(recovered)), range(0, 150));
    await recovered.close();
  });
});

test("a header claiming more bytes than the file holds is a torn write: cut, not an allocation", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 10);
    const lastPath = join(dir, wals.at(-1)!);
    const good = await readFile(lastPath);
    const fake = Buffer.from(makeBatch("huge", 1).subarray(0, 29));
    fake.writeUInt32BE(20, 17); // metadata size
    fake.writeUInt32BE(0xfffffff0, 21); // payload size: ~4 GiB
    await writeFile(lastPath, Buffer.concat([good, fake, Buffer.alloc(100, 7)]));
    const log = await PartitionLog.open(dir, config);
    assert.equal(log.logEndOffset, 30);
    await log.close();
    assert.equal((await stat(lastPath)).size, good.length);
  });
});

test("leftover temporary and prepared files are removed on open", async () => {
  await withTempDir(async (dir) => {
    await fill(dir, 5);
    await writeFile(join(dir, "next.wal.prepared"), Buffer.alloc(100));
    await writeFile(join(dir, "00000000000000000000.idx.tmp"), Buffer.alloc(3));
    await writeFile(join(dir, "00000000000000099999.idx"), Buffer.alloc(16));
    const log = await PartitionLog.open(dir, config);
    assert.equal(log.logEndOffset, 15);
    const names = await readdir(dir);
    assert.ok(!names.includes("next.wal.prepared"));
    assert.ok(!names.includes("00000000000000000000.idx.tmp"));
    assert.ok(!names.includes("00000000000000099999.idx"));
    await log.close();
  });
});

test("after a clean stop the open reads the active segment's index and scans none of it; after a crash it scans it", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 40);
    const lastPath = join(dir, wals.at(-1)!);
    const original = await readFile(lastPath);
    const first = batchesOf(original)[1]!;
    const end = batchesOf(original).at(-1)!.base + 3;
    // A flipped byte in an early batch of the active segment: only a scan of the segment sees it.
    const damaged = Buffer.from(original);
    damaged[first.at + 40] = damaged[first.at + 40]! ^ 0xff;
    await writeFile(lastPath, damaged);

    const clean = await PartitionLog.open(dir, config);
    assert.equal(clean.logEndOffset, end);
    assert.deepEqual(clean.quarantined(), [], "not scanned at open");
    // A read still checks what it reads, and finds it.
    await assert.rejects(clean.read(first.base, 1), /quarantined|failed its check/);
    await clean.close();

    await writeFile(lastPath, damaged);
    await asAfterCrash(lastPath);
    const crashed = await PartitionLog.open(dir, config);
    assert.equal(crashed.logEndOffset, end);
    assert.equal(crashed.quarantined()[0]?.firstOffset, first.base, "scanned at open");
    await crashed.close();
  });
});

test("after a crash the open scans the active segment only past its index checkpoint, and cuts the torn tail there", async () => {
  await withTempDir(async (dir) => {
    const live = join(dir, "live");
    const copy = join(dir, "copy");
    const big = testConfig({ segmentBytes: 64 * 1024, indexIntervalBytes: 300 });
    // Timestamps of now: the fixed default is old enough for segmentMs to roll at the reopen.
    const now = Date.now();
    let log = await PartitionLog.open(live, big);
    for (let i = 0; i < 40; i++) await log.append(makeBatch(`c${i}`, 3, now));
    await log.close();
    // The open keeps the clean stop's index as the checkpoint; then more is appended, and a copy
    // taken while the log is open is what a SIGKILL leaves.
    log = await PartitionLog.open(live, big);
    for (let i = 40; i < 50; i++) await log.append(makeBatch(`c${i}`, 3, now));
    await cp(live, copy, { recursive: true });
    await log.close();
    const walPath = join(copy, "00000000000000000000.wal");
    assert.ok((await readdir(copy)).includes("00000000000000000000.idx.checkpoint"));
    const wal = await readFile(walPath);
    const batches = batchesOf(wal.subarray(0, wal.indexOf(Buffer.alloc(64))));
    // A flipped byte early on, which only a whole scan would see, and the last batch torn.
    wal[batches[1]!.at + 40]! ^= 0xff;
    await writeFile(walPath, wal.subarray(0, batches.at(-1)!.at + 30));

    const ops = new TestFileOps();
    const recovered = await PartitionLog.open(copy, big, undefined, { fileOps: ops });
    assert.equal(recovered.logEndOffset, 147, "the torn last batch is cut");
    assert.deepEqual(recovered.quarantined(), [], "the segment before the checkpoint was not scanned");
    assert.equal(ops.datasyncs.count, 1, "what a crash left is fsynced");
    // The damage is there: a read checks what it reads, and finds it.
    await assert.rejects(recovered.read(batches[1]!.base, 1), /quarantined|failed its check/);
    await recovered.close();
  });
});

test("an index checkpoint whose last entry finds no batch is not trusted: the segment is scanned whole and the checkpoint goes", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 40);
    const lastPath = join(dir, wals.at(-1)!);
    await (await PartitionLog.open(dir, config)).close();
    // What a crash after the next open left: the clean stop's index, kept as the checkpoint.
    await rename(lastPath.replace(/\.wal$/, ".idx"), lastPath.replace(/\.wal$/, ".idx.checkpoint"));
    const original = await readFile(lastPath);
    const found = batchesOf(original);
    // Data the checkpoint points at was lost (a machine crash): the segment ends before its last entry.
    const cut = found.at(-3)!;
    const damaged = Buffer.from(original.subarray(0, cut.at));
    damaged[found[1]!.at + 40]! ^= 0xff;
    await writeFile(lastPath, damaged);

    const log = await PartitionLog.open(dir, config);
    assert.equal(log.logEndOffset, cut.base);
    assert.equal(log.quarantined()[0]?.firstOffset, found[1]!.base, "scanned whole");
    assert.ok(!(await readdir(dir)).includes(basename(lastPath).replace(/\.wal$/, ".idx.checkpoint")));
    await log.close();
  });
});

test("an index checkpoint a crash left with a partial last entry is not trusted: the segment is scanned whole", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 40);
    const lastPath = join(dir, wals.at(-1)!);
    const opened = await PartitionLog.open(dir, config);
    const end = opened.logEndOffset;
    await opened.close();
    // What a crash after the next open left: the clean stop's index, kept as the checkpoint.
    const checkpoint = lastPath.replace(/\.wal$/, ".idx.checkpoint");
    await rename(lastPath.replace(/\.wal$/, ".idx"), checkpoint);
    const entries = await readFile(checkpoint);
    assert.ok(entries.length >= 32);
    // An append of entries torn by the crash: half an entry past the whole ones.
    await writeFile(checkpoint, Buffer.concat([entries, entries.subarray(0, 8)]));
    const original = await readFile(lastPath);
    const found = batchesOf(original);
    const damaged = Buffer.from(original);
    damaged[found[1]!.at + 40]! ^= 0xff; // only a whole scan sees this
    await writeFile(lastPath, damaged);

    const log = await PartitionLog.open(dir, config);
    assert.equal(log.quarantined()[0]?.firstOffset, found[1]!.base, "scanned whole");
    assert.equal(log.logEndOffset, end);
    await log.close();
  });
});

test("an open after a clean stop fsyncs nothing; after a crash it fsyncs what recovery kept", async () => {
  await withTempDir(async (dir) => {
    const wals = await fill(dir, 40);
    const clean = new TestFileOps();
    await (await PartitionLog.open(dir, config, undefined, { fileOps: clean })).close();
    assert.equal(clean.datasyncs.count, 0, "the clean stop synced every byte before writing the index");

    await asAfterCrash(join(dir, wals.at(-1)!));
    const crashed = new TestFileOps();
    const log = await PartitionLog.open(dir, config, undefined, { fileOps: crashed });
    assert.equal(crashed.datasyncs.count, 1, "the scanned tail may be in the page cache only");
    await log.close();
  });
});

test("after a crash the search past zeros stops near the allocated blocks, not at the preallocated length", () => {
  const MiB = 1024 * 1024;
  // A 128 MiB segment file holding 64 KiB: 128 MiB of holes were read per partition at each open.
  assert.equal(searchLimit({ blocks: 128, size: 128 * MiB }, 128 * MiB), 128 * 1024 + MiB);
  assert.equal(searchLimit({ blocks: 0, size: 128 * MiB }, 128 * MiB), MiB, "an empty segment");
  assert.equal(
    searchLimit({ blocks: 300_000, size: 128 * MiB }, 128 * MiB),
    128 * MiB,
    "never past the file",
  );
  assert.equal(searchLimit({ blocks: Number.NaN, size: 4 * MiB }, 4 * MiB), 4 * MiB, "blocks unknown");
});

test("after a crash of the process alone the search past zeros stops at the allocated blocks", () => {
  const MiB = 1024 * 1024;
  // The page cache kept every page written: 1 MiB of zeros per partition was read for nothing.
  assert.equal(searchLimit({ blocks: 128, size: 128 * MiB }, 128 * MiB, true), 128 * 512);
  assert.equal(searchLimit({ blocks: 0, size: 128 * MiB }, 128 * MiB, true), 0, "an empty segment");
  assert.equal(searchLimit({ blocks: 300_000, size: 128 * MiB }, 128 * MiB, true), 128 * MiB);
  assert.equal(searchLimit({ blocks: Number.NaN, size: 4 * MiB }, 4 * MiB, true), 4 * MiB);
});

test("after a crash in the same boot the log serves before the fsync of what recovery kept, which durable appends wait for", {
  timeout: 20_000,
}, async () => {
  await withTempDir(async (dir) => {
    const live = join(dir, "live");
    const config = testConfig();
    const log = await PartitionLog.open(live, config);
    for (let i = 0; i < 10; i++) await log.append(makeBatch(`k${i}`, 3));
    // Copies taken while the log is open are what a SIGKILL leaves.
    await cp(live, join(dir, "copy"), { recursive: true });
    await cp(live, join(dir, "sync"), { recursive: true });
    await log.close();

    const ops = new TestFileOps();
    let release = (): void => {};
    ops.syncGate = new Promise<void>((resolve) => (release = resolve));
    // No fsync can end while the gate is shut: an open that waited for one would never return.
    const recovered = await PartitionLog.open(join(dir, "copy"), config, undefined, {
      fileOps: ops,
      pagesKept: true,
      flushQueue: new FlushQueue(),
    });
    try {
      assert.equal(recovered.logEndOffset, 30);
      assert.equal(recovered.highWatermark, 30, "readers see what the crashed process wrote, as it did");
      assert.equal(recovered.flushedOffset, 0, "nothing recovered counts as durable before its fsync");
      const durable = recovered.append(makeBatch("k10", 3), { durable: true });
      release();
      assert.equal((await durable).baseOffset, 30);
      assert.equal(recovered.flushedOffset, 33);
      assert.deepEqual(offsetsOf(await readAll(recovered)), range(0, 33));
    } finally {
      release();
      await recovered.close();
    }

    // Under flush=sync readers see only what an fsync covers: that one still comes first.
    const syncOps = new TestFileOps();
    const synced = await PartitionLog.open(join(dir, "sync"), testConfig({ flush: "sync" }), undefined, {
      fileOps: syncOps,
      pagesKept: true,
    });
    assert.equal(syncOps.datasyncs.count, 1);
    assert.equal(synced.highWatermark, 30);
    await synced.close();
  });
});

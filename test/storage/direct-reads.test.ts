import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import type { DirectReads } from "../../src/storage/config.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Segment } from "../../src/storage/segment.js";
import { readAll, testConfig, withTempDir } from "./helpers.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Counts the direct reads and the reads through the page cache that segments make. */
function countReads(): { direct: number; cached: number; directBases: Set<number>; restore: () => void } {
  const direct = Segment.prototype.readDirect;
  const cached = Segment.prototype.read;
  const counts = {
    direct: 0,
    cached: 0,
    directBases: new Set<number>(),
    restore: () => {
      Segment.prototype.readDirect = direct;
      Segment.prototype.read = cached;
    },
  };
  Segment.prototype.readDirect = function (this: Segment, ...args) {
    counts.direct++;
    counts.directBases.add(this.baseOffset);
    return direct.apply(this, args);
  };
  Segment.prototype.read = function (this: Segment, ...args) {
    counts.cached++;
    return cached.apply(this, args);
  };
  return counts;
}

/** The active segment's base offset: the newest segment file's. */
async function activeBase(dir: string): Promise<number> {
  const wals = (await readdir(dir)).filter((f) => f.endsWith(".wal")).sort();
  return Number.parseInt(wals[wals.length - 1]!, 10);
}

/** A log of several closed segments, batches of uneven sizes (so reads start and end off any block). */
async function writeLog(
  dir: string,
  directReads: DirectReads,
  batches = 120,
  segmentBytes = 64 * KiB,
): Promise<void> {
  const log = await PartitionLog.open(dir, testConfig({ segmentBytes, directReads }));
  const builder = new BatchBuilder({ slabBytes: 64 * KiB });
  for (let b = 0; b < batches; b++) {
    const records = 1 + (b % 5);
    for (let i = 0; i < records; i++)
      builder.add(randomBytes(37 + ((b * 131 + i * 17) % 3000)), null, 1_700_000_000_000);
    await log.append(Buffer.from(builder.finish()), { durable: false });
  }
  await log.close();
}

async function openLog(dir: string, directReads: DirectReads): Promise<PartitionLog> {
  return PartitionLog.open(dir, testConfig({ segmentBytes: 64 * KiB, directReads }));
}

test("closed segments read with direct I/O give the batches the page cache gives", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off");
    const cachedLog = await openLog(dir, "off");
    const expected = await readAll(cachedLog, 10 * KiB);
    await cachedLog.close();
    const counts = countReads();
    try {
      const log = await openLog(dir, "on");
      assert.ok(log.segmentCount > 3, "several closed segments");
      for (const maxBytes of [1, 4 * KiB, 10 * KiB, 100 * KiB]) {
        assert.deepEqual(await readAll(log, maxBytes), expected, `reads of ${maxBytes} bytes`);
      }
      await log.close();
    } finally {
      counts.restore();
    }
    assert.ok(counts.direct > 0, "the closed segments were read with direct I/O");
    assert.ok(!counts.directBases.has(await activeBase(dir)), "the active segment is read through the cache");
  });
});

test("any read, direct or through the cache, returns the same bytes", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off");
    const log = await openLog(dir, "on");
    try {
      const end = log.highWatermark;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: end - 1 }),
          fc.integer({ min: 1, max: 200 * KiB }),
          async (offset, maxBytes) => {
            log.updateConfig({ ...log.config, directReads: "on" });
            const direct = await log.read(offset, maxBytes);
            const directBytes = Buffer.from(direct.records);
            log.updateConfig({ ...log.config, directReads: "off" });
            const cached = await log.read(offset, maxBytes);
            assert.ok(directBytes.equals(cached.records), `read at ${offset}, ${maxBytes} bytes`);
            assert.equal(direct.highWatermark, cached.highWatermark);
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      await log.close();
    }
  });
});

/** Reads through the cache made slow (20 ms), as reads that wait for a disk are; restored by the result. */
function slowCachedReads(): () => void {
  const cachedRead = Segment.prototype.read;
  Segment.prototype.read = async function (this: Segment, buf: Buffer, length: number, position: number) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return cachedRead.call(this, buf, length, position);
  };
  return () => {
    Segment.prototype.read = cachedRead;
  };
}

/** Drops the clean cached pages of the log's segment files (GNU dd: posix_fadvise DONTNEED); false where it cannot. */
async function dropCachedPages(dir: string): Promise<boolean> {
  try {
    for (const f of await readdir(dir)) {
      if (f.endsWith(".wal"))
        execFileSync("dd", [`if=${join(dir, f)}`, "iflag=nocache", "count=0", "status=none"]);
    }
    return true;
  } catch {
    return false;
  }
}

test("auto: a closed segment whose read came from the disk is read directly from then on; the active one never", async (t) => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off", 1200, MiB);
    if (!(await dropCachedPages(dir))) {
      t.skip("the page cache cannot be dropped here");
      return;
    }
    const counts = countReads();
    const restoreReads = slowCachedReads();
    try {
      // Segments of 1 MiB, so that a read is long enough to be timed.
      const log = await PartitionLog.open(dir, testConfig({ segmentBytes: MiB, directReads: "auto" }));
      assert.ok(log.segmentCount >= 3);
      const expected = await readAll(log, 512 * KiB);
      const afterFirstPass = counts.direct;
      assert.deepEqual(await readAll(log, 512 * KiB), expected);
      assert.ok(counts.direct > afterFirstPass, "the second pass reads the segments found cold directly");
      assert.ok(!counts.directBases.has(await activeBase(dir)), "never the active segment");
      await log.close();
    } finally {
      restoreReads();
      counts.restore();
    }
  });
});

test("auto: a read of cached pages that was only slow to be answered does not make a segment direct", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off", 1200, MiB);
    const counts = countReads();
    const restoreReads = slowCachedReads();
    try {
      const log = await PartitionLog.open(dir, testConfig({ segmentBytes: MiB, directReads: "auto" }));
      await readAll(log, 512 * KiB);
      await readAll(log, 512 * KiB);
      await log.close();
    } finally {
      restoreReads();
      counts.restore();
    }
    assert.equal(counts.direct, 0, "the pages were cached: no disk reads were counted");
    assert.ok(counts.cached > 0);
  });
});

test("a file system without direct I/O: the read goes through the cache, and the segment stops trying", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off");
    const direct = Segment.prototype.readDirect;
    let tries = 0;
    Segment.prototype.readDirect = async () => {
      tries++;
      throw Object.assign(new Error("Invalid argument"), { code: "EINVAL" });
    };
    try {
      const cachedLog = await openLog(dir, "off");
      const expected = await readAll(cachedLog, 10 * KiB);
      await cachedLog.close();
      const log = await openLog(dir, "on");
      assert.deepEqual(await readAll(log, 10 * KiB), expected);
      const segments = log.segmentCount;
      assert.deepEqual(await readAll(log, 10 * KiB), expected);
      await log.close();
      assert.ok(
        tries > 0 && tries < segments,
        `one refused try per closed segment (${tries} for ${segments})`,
      );
    } finally {
      Segment.prototype.readDirect = direct;
    }
  });
});

test("any other failure of a direct read fails the read", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir, "off");
    const direct = Segment.prototype.readDirect;
    Segment.prototype.readDirect = async () => {
      throw Object.assign(new Error("Input/output error"), { code: "EIO" });
    };
    try {
      const log = await openLog(dir, "on");
      await assert.rejects(log.read(0, 10 * KiB), /Input\/output error/);
      await log.close();
    } finally {
      Segment.prototype.readDirect = direct;
    }
  });
});

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { offsetAfter } from "../../src/format/batch-header.js";
import { releaseReadBuffer } from "../../src/format/read-buffers.js";
import type { DirectReads } from "../../src/storage/config.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { readAheadCounts } from "../../src/storage/read-ahead.js";
import { Segment } from "../../src/storage/segment.js";
import { testConfig, withTempDir } from "./helpers.js";

const KiB = 1024;

/** A log of several closed segments of 256 KiB, batches of uneven sizes. */
async function writeLog(dir: string): Promise<void> {
  const log = await PartitionLog.open(dir, config("off"));
  const builder = new BatchBuilder({ slabBytes: 64 * KiB });
  for (let b = 0; b < 400; b++) {
    for (let i = 0; i < 1 + (b % 4); i++)
      builder.add(randomBytes(50 + ((b * 131 + i * 17) % 2900)), null, 1_700_000_000_000);
    await log.append(Buffer.from(builder.finish()), { durable: false });
  }
  await log.close();
}

function config(directReads: DirectReads) {
  return testConfig({ segmentBytes: 256 * KiB, directReads });
}

/**
 * Reads from `offset` on as a fetch stream does: each read starts after the last batch of the one
 * before, and its buffer is handed back once copied. Returns the bytes read, read by read.
 */
async function readOn(log: PartitionLog, offset: number, maxBytes: number, reads: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let r = 0; r < reads && offset < log.highWatermark; r++) {
    const { records } = await log.read(offset, maxBytes);
    out.push(Buffer.from(records));
    offset = offsetAfter(records);
    releaseReadBuffer(records);
  }
  return out;
}

/** Runs `fn` on a log of closed segments written in a fresh directory, opened to read directly. */
async function withDirectLog(fn: (log: PartitionLog, dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await writeLog(dir);
    const log = await PartitionLog.open(dir, config("on"));
    try {
      await fn(log, dir);
    } finally {
      await log.close();
    }
  });
}

/** What reads through the page cache give: `readOn` of a log of `dir` opened to read through it. */
async function cachedReads(dir: string, offset: number, maxBytes: number, reads: number): Promise<Buffer[]> {
  const cached = await PartitionLog.open(dir, config("off"));
  try {
    return await readOn(cached, offset, maxBytes, reads);
  } finally {
    await cached.close();
  }
}

// First in the file: the tests after it leave aligned buffers alive until the collector finds
// them, and a read-ahead makes no new one while fewer than 8 more could be made (it then reads
// nothing ahead, and this test would measure plain reads).
test("a read-ahead copies what the read before it holds, so a run of reads reads each byte from the disk about once", async () => {
  await withDirectLog(async (log, dir) => {
    const expected = await cachedReads(dir, 0, 16 * KiB, 10_000);
    const logBytes = expected.reduce((sum, b) => sum + b.length, 0);
    const before = readAheadCounts();
    directBytes = 0;
    const got = await readOn(log, 0, 16 * KiB, 10_000);
    assert.deepEqual(got, expected);
    assert.ok(readAheadCounts().keptBytes > before.keptBytes, "read-aheads copied bytes");
    // Each read asks for 84 KiB (16 KiB, the index interval and the slack) and returns about 16:
    // read again by every read after it, the log was read 4.7 times over. What is left: each
    // segment's first two reads (no read-ahead yet) and the block each read ends in.
    assert.ok(directBytes < 2 * logBytes, `${directBytes} bytes read for a log of ${logBytes}`);
  });
});

test("a reader going on through closed segments read directly reads ahead, and gets what the page cache gives", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir);
    const expected = await cachedReads(dir, 0, 16 * KiB, 10_000);
    const log = await PartitionLog.open(dir, config("on"));
    assert.ok(log.segmentCount > 3, "several closed segments");
    const before = readAheadCounts();
    const got = await readOn(log, 0, 16 * KiB, 10_000);
    const after = readAheadCounts();
    assert.deepEqual(got, expected);
    assert.ok(after.used - before.used > 20, `read-aheads were used (${after.used - before.used})`);
    await log.close();
    assert.equal(readAheadCounts().live, 0, "closing the segments drops their read-aheads");
  });
});

test("the first direct read of a segment, and a read that does not go on from the last, start no read-ahead", async () => {
  await withDirectLog(async (log, dir) => {
    const before = readAheadCounts();
    await readOn(log, 0, 16 * KiB, 1);
    assert.equal(readAheadCounts().started, before.started, "one read is no sequence yet");
    await readOn(log, 0, 16 * KiB, 3);
    const mid = readAheadCounts();
    assert.ok(mid.started > before.started, "reads going on from the last start one");
    // A read elsewhere in the same segment: the read-ahead waiting there is dropped, not served.
    const [elsewhere] = await readOn(log, 2, 16 * KiB, 1);
    assert.ok(elsewhere!.equals((await cachedReads(dir, 2, 16 * KiB, 1))[0]!));
    const after = readAheadCounts();
    assert.equal(after.used, mid.used);
    assert.equal(after.dropped, mid.dropped + 1);
    assert.equal(after.live, 0);
  });
});

test("a read-ahead is not served once its segment holds other bytes", async () => {
  await withDirectLog(async (log, dir) => {
    const expected = await cachedReads(dir, 0, 16 * KiB, 4);
    const firstTwo = await readOn(log, 0, 16 * KiB, 2);
    // The read-ahead for the third read was read from what the segment held then; a segment cut
    // back and written again holds other bytes, and its size tells.
    const seg = lastDirect;
    assert.ok(seg?.readAhead != null, "a read-ahead is waiting");
    await seg.readAhead.done;
    const counts = readAheadCounts();
    const size = seg.size;
    seg.size = size - 1;
    const [third] = await readOn(log, offsetAfter(firstTwo[1]!), 16 * KiB, 1).finally(() => {
      seg.size = size;
    });
    assert.equal(readAheadCounts().used, counts.used, "not served");
    assert.equal(readAheadCounts().dropped, counts.dropped + 1, "dropped");
    assert.ok(third!.equals(expected[2]!));
  });
});

test("any run of reads going on from the last, direct with read-aheads, returns batches the page cache gives", async () => {
  await withTempDir(async (dir) => {
    await writeLog(dir);
    const cached = await PartitionLog.open(dir, config("off"));
    const log = await PartitionLog.open(dir, config("on"));
    try {
      const end = log.highWatermark;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: end - 1 }),
          fc.array(fc.integer({ min: 1, max: 100 * KiB }), { minLength: 1, maxLength: 12 }),
          async (start, sizes) => {
            let a = start;
            let b = start;
            for (const maxBytes of sizes) {
              if (a >= end) break;
              const direct = await log.read(a, maxBytes);
              const directBytes = Buffer.from(direct.records);
              releaseReadBuffer(direct.records);
              const through = await cached.read(b, maxBytes);
              // A read served by a read-ahead shorter than it asks returns the batches that holds:
              // whole ones, at least one, and the same bytes as far as they go.
              assert.ok(directBytes.length > 0, `read at ${a} of ${maxBytes} bytes`);
              assert.ok(
                directBytes.equals(through.records.subarray(0, directBytes.length)),
                `read at ${a} of ${maxBytes} bytes`,
              );
              a = b = offsetAfter(directBytes);
            }
          },
        ),
        { numRuns: 100 },
      );
    } finally {
      await log.close();
      await cached.close();
    }
  });
});

/** The segment of the last direct read, and the bytes direct reads asked for. */
let lastDirect: Segment | null = null;
let directBytes = 0;
const readDirect = Segment.prototype.readDirect;
Segment.prototype.readDirect = function (this: Segment, buf: Buffer, length: number, position: number) {
  lastDirect = this;
  directBytes += length;
  return readDirect.call(this, buf, length, position);
};

import assert from "node:assert/strict";
import { closeSync, constants, openSync, readSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { isAlignedBuffer } from "../../src/format/aligned-buffers.js";
import {
  isLentReadBuffer,
  keptReadBuffers,
  releaseReadBuffer,
  releaseUnlessSent,
  takeAlignedReadBuffer,
  takeReadBuffer,
} from "../../src/format/read-buffers.js";

const KiB = 1024;
const MiB = 1024 * KiB;

test("a read buffer handed back through a view of it is lent again, once", () => {
  const a = takeReadBuffer(MiB + 68 * KiB);
  assert.ok(a.length >= MiB + 68 * KiB);
  assert.ok(isLentReadBuffer(a.subarray(10, 20)));
  releaseReadBuffer(a.subarray(100, 200));
  assert.equal(isLentReadBuffer(a), false);
  // Twice is once: the buffer is not listed twice, so two reads never share it.
  releaseReadBuffer(a);
  const b = takeReadBuffer(MiB);
  const c = takeReadBuffer(MiB);
  assert.equal(b.buffer, a.buffer, "the buffer handed back serves the next read");
  assert.notEqual(c.buffer, a.buffer, "and only one of them");
  releaseReadBuffer(b);
  releaseReadBuffer(c);
});

test("a buffer too small for a read is not lent for it; one kept is never lent while out", () => {
  const small = takeReadBuffer(100 * KiB);
  releaseReadBuffer(small);
  const big = takeReadBuffer(2 * MiB);
  assert.notEqual(big.buffer, small.buffer);
  assert.ok(big.length >= 2 * MiB);
  const again = takeReadBuffer(50 * KiB);
  assert.equal(again.buffer, small.buffer);
  assert.ok(isLentReadBuffer(again) && isLentReadBuffer(big));
  releaseReadBuffer(again);
  releaseReadBuffer(big);
});

test("buffers that were not lent are ignored: Node's pool, copies, oversized reads", () => {
  const before = keptReadBuffers();
  const pooled = Buffer.from("abc");
  const copy = Buffer.alloc(512 * KiB);
  const huge = takeReadBuffer(9 * MiB);
  for (const b of [pooled, copy, huge]) {
    assert.equal(isLentReadBuffer(b), false);
    releaseReadBuffer(b);
  }
  assert.deepEqual(keptReadBuffers(), before);
});

test("releaseUnlessSent keeps a buffer the response still refers to", () => {
  const read = takeReadBuffer(MiB);
  const records = read.subarray(0, 4096);
  releaseUnlessSent(records, [Buffer.from("header"), read.subarray(0, 2048)]);
  assert.ok(isLentReadBuffer(read), "a piece refers to it");
  releaseUnlessSent(records, Buffer.from("a copy"));
  assert.equal(isLentReadBuffer(read), false, "a copy does not");
});

test("idle buffers kept are bounded in bytes", () => {
  const lent: Buffer[] = [];
  for (let i = 0; i < 40; i++) lent.push(takeReadBuffer(MiB));
  for (const b of lent) releaseReadBuffer(b);
  assert.ok(keptReadBuffers().bytes <= 32 * MiB);
});

test("aligned read buffers are lent and handed back like the others, and hold a direct read", async () => {
  // An empty pool first (the tests above leave it full, and a full pool keeps nothing handed back).
  for (let n = keptReadBuffers().count; n > 0; n--) takeReadBuffer(1);
  const a = takeAlignedReadBuffer(MiB + 68 * KiB);
  assert.ok(a !== null, "WebAssembly memory is available here");
  assert.ok(a.length >= MiB + 68 * KiB && isAlignedBuffer(a) && isLentReadBuffer(a));
  releaseReadBuffer(a.subarray(4096, 8192));
  assert.equal(isLentReadBuffer(a), false);
  const b = takeAlignedReadBuffer(MiB);
  assert.ok(b?.buffer === a.buffer, "the aligned buffer handed back serves the next direct read");
  // A plain buffer handed back does not serve a direct read.
  const plain = takeReadBuffer(2 * MiB);
  releaseReadBuffer(plain);
  const c = takeAlignedReadBuffer(2 * MiB);
  assert.ok(c !== null && c.buffer !== plain.buffer && isAlignedBuffer(c));
  // The kernel takes it for O_DIRECT where the file system has it (EINVAL for a misaligned buffer).
  const dir = await mkdtemp(join(tmpdir(), "conch-aligned-"));
  try {
    const path = join(dir, "f");
    await writeFile(path, Buffer.alloc(8192, 7));
    let fd = -1;
    try {
      fd = openSync(path, constants.O_RDONLY | (constants.O_DIRECT ?? 0));
    } catch {
      return; // no O_DIRECT on this file system
    }
    try {
      assert.equal(readSync(fd, c, 0, 8192, 0), 8192);
      assert.equal(c[8191], 7);
    } finally {
      closeSync(fd);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    releaseReadBuffer(b!);
    releaseReadBuffer(c);
  }
});

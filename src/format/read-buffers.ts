/**
 * Buffers that segment reads are made into (storage's LogReader), lent out with the batches read
 * and taken back once nothing references them, instead of a fresh 1 MiB allocation per read. A
 * fresh one is memory outside the heap that V8 counts: a consumer reading old data started a full
 * mark-compact every few hundred milliseconds ("external memory pressure"), each one pausing the
 * event loop that also answers producers (docs/performance/scale.md, "Workload 8 and K2: reused read
 * buffers").
 *
 * Ownership: a buffer is lent to one read, whose batches (views of it) go to one reader. Handing it
 * back is that reader's choice, made only where it knows nothing refers to the views any more: the
 * transport hands back the read buffers among a response's pieces once the socket's write of them
 * has ended (net/socket-writes.ts), and a reader that copied or dropped what it read hands it back
 * at once. A lent buffer nobody hands back (an embedded consumer holds it, a response was dropped)
 * is collected like any other: lending is tracked in a WeakSet, so forgetting costs a reuse, never
 * memory. Handing back is idempotent, and ignores anything that is not a lent buffer (a view of
 * Node's shared pool, a copy).
 */

import { isAlignedBuffer, newAlignedBuffer } from "./aligned-buffers.js";

/** Buffers are made in steps of this size, so that reads of similar sizes share them. */
const STEP_BYTES = 256 * 1024;
/** Reads larger than this get a buffer of their own, never kept. */
const MAX_POOLED_BYTES = 8 * 1024 * 1024;
/** Idle buffers kept at most, in bytes (a few concurrent 1 MiB fetches' worth). */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;

const kept: Buffer[] = [];
let keptBytes = 0;
/** The ArrayBuffers of the buffers lent and not handed back yet. */
const lent = new WeakSet<ArrayBufferLike>();

/**
 * A buffer of at least `bytes` bytes (not zeroed), lent until `releaseReadBuffer` is given it or
 * a view of it. The most recently handed back one that is large enough, else a new one.
 */
export function takeReadBuffer(bytes: number): Buffer {
  if (bytes > MAX_POOLED_BYTES) return Buffer.allocUnsafe(bytes);
  // Its own ArrayBuffer (not Node's shared pool): the views of it are known by it.
  const buf = takeKept(bytes, false) ?? Buffer.allocUnsafeSlow(stepped(bytes));
  lent.add(buf.buffer);
  return buf;
}

/**
 * `takeReadBuffer` for a direct read: a page-aligned buffer (aligned-buffers.ts), the most recently
 * handed back aligned one that is large enough, else a new one unless fewer than `spare` more could
 * be made (a read-ahead leaves those to reads); null when none (the read then goes through the page
 * cache).
 */
export function takeAlignedReadBuffer(bytes: number, spare = 0): Buffer | null {
  if (bytes > MAX_POOLED_BYTES) return null;
  const buf = takeKept(bytes, true) ?? newAlignedBuffer(stepped(bytes), spare);
  if (buf !== null) lent.add(buf.buffer);
  return buf;
}

/** Takes the most recently handed back kept buffer of at least `bytes` (page-aligned if asked), if any. */
function takeKept(bytes: number, aligned: boolean): Buffer | null {
  for (let i = kept.length - 1; i >= 0; i--) {
    const k = kept[i]!;
    if (k.length >= bytes && (!aligned || isAlignedBuffer(k))) {
      kept[i] = kept[kept.length - 1]!;
      kept.pop();
      keptBytes -= k.length;
      return k;
    }
  }
  return null;
}

/** `bytes` rounded up to whole steps, so that reads of similar sizes share buffers. */
function stepped(bytes: number): number {
  return Math.ceil(bytes / STEP_BYTES) * STEP_BYTES;
}

/** Whether `view` is (a view of) a read buffer lent and not handed back. */
export function isLentReadBuffer(view: Uint8Array): boolean {
  // Most buffers written are small views of Node's 8 KiB pool: one comparison rules them out.
  return view.buffer.byteLength >= STEP_BYTES && lent.has(view.buffer);
}

/**
 * Hands back the read buffer `view` is a view of, to be lent to a later read: nothing may read
 * any view of it afterwards. Does nothing when it is not lent.
 */
export function releaseReadBuffer(view: Uint8Array): void {
  if (!isLentReadBuffer(view)) return;
  const ab = view.buffer;
  lent.delete(ab);
  if (keptBytes + ab.byteLength > MAX_KEPT_BYTES) return;
  kept.push(Buffer.from(ab, 0, ab.byteLength));
  keptBytes += ab.byteLength;
}

/**
 * Hands back `read`'s buffer unless one of `sent` (what goes out in its place: a conversion, a
 * copy, pieces) is a view of it.
 */
export function releaseUnlessSent(read: Uint8Array, sent: Uint8Array | readonly Uint8Array[]): void {
  if (!isLentReadBuffer(read)) return;
  const ab = read.buffer;
  if (sent instanceof Uint8Array) {
    if (sent.buffer === ab) return;
  } else {
    for (const s of sent) if (s.buffer === ab) return;
  }
  releaseReadBuffer(read);
}

/** Idle buffers kept, and their bytes (for tests and metrics). */
export function keptReadBuffers(): { count: number; bytes: number } {
  return { count: kept.length, bytes: keptBytes };
}

/**
 * Disk blocks are reserved (fallocate) for a segment in steps ahead of its write position, not for
 * the whole segment at once. A partition's first segment reserves nothing until it holds 1 MiB
 * (its blocks are allocated as written until then), then 4 MiB, so creating many partitions cannot
 * fill the disk with empty reservations, nor writing a little to each of them (10,000 partitions
 * reserving 16 MiB each at their first data filled a 250 GB disk with 1 GB of data); a segment
 * prepared ahead of a roll (a busy partition) gets a 16 MiB chunk at once. The file's length is
 * segmentBytes from the start (ftruncate, which costs no blocks), so an append never waits for the
 * file to grow. Once the writes pass half of what is reserved, the reservation doubles in the
 * background (4, 8, 16 MiB, ... up to segmentBytes), well before the writes reach its end: a
 * partition being written holds at most four times its data, and a fast writer needs only a few
 * fallocate calls per segment.
 *
 * A segment found on disk at open reserves nothing either until 1 MiB more is written to it
 * (`reserveAfter`): each reservation is a process of its own run one after another by one helper
 * (about 5 ms here), and a start that reserved ahead for every log holding 1 MiB or more queued
 * one for each of 10,000 partitions, 50 s of them, for partitions mostly idle. A reservation
 * still waiting its turn when its segment is cut, rolled or closed is withdrawn (settleReserve),
 * so that none of those waits behind the others' queue.
 */
import { type FileOps, PREALLOCATE_MIN_BYTES } from "./file-ops.js";
import type { Segment } from "./segment.js";

/** The reservation step: large enough that fallocate is rare, small enough to hold per partition. */
export const RESERVE_CHUNK_BYTES = 16 * 1024 * 1024;

export function reserveChunk(segmentBytes: number): number {
  return Math.min(segmentBytes, RESERVE_CHUNK_BYTES);
}

/** A segment reserves nothing ahead until it holds this much. */
export const RESERVE_AFTER_BYTES = 1024 * 1024;
/** The first reservation, and the least any step reserves (PREALLOCATE_MIN_BYTES: less is not worth it). */
export const FIRST_RESERVE_BYTES = PREALLOCATE_MIN_BYTES;

/**
 * Starts the next reservation of `seg` once its writes passed half of what is reserved. Cheap when
 * nothing is due (two comparisons), so it is called after every write. One reservation runs at a
 * time, kept in `seg.preallocation` (awaited before the file is cut).
 */
export function extendReserve(seg: Segment, ops: FileOps, segmentBytes: number): void {
  if (seg.reservedTo >= segmentBytes || seg.reserveWithdraw !== null) return;
  // Little written yet: an idle or nearly idle partition reserves no blocks (many would fill the disk).
  if (seg.size < seg.reserveAfter || seg.size * 2 < seg.reservedTo) return;
  const upTo = Math.min(segmentBytes, Math.max(FIRST_RESERVE_BYTES, 2 * Math.max(seg.reservedTo, seg.size)));
  // Only the new range: what is reserved (or written) already is not walked again.
  const from = Math.min(seg.reservedTo, seg.size);
  const withdraw = new AbortController();
  seg.reserveWithdraw = withdraw;
  seg.preallocation = ops.preallocate(seg.walPath, upTo, from, withdraw.signal).then((ok) => {
    seg.reserveWithdraw = null;
    // Withdrawn: the segment is being cut or closed, and sets what it holds itself.
    if (withdraw.signal.aborted && !ok) return;
    // A file system that refuses (or a segment too small to bother) is left sparse from here on.
    seg.reservedTo = ok ? upTo : segmentBytes;
  });
}

/**
 * Before a segment's file is cut or closed: withdraws its reservation if that still waits its turn,
 * and resolves once none runs (one already running is waited for: it could extend the file).
 */
export function settleReserve(seg: Segment): Promise<unknown> | null {
  seg.reserveWithdraw?.abort();
  return seg.preallocation;
}

/**
 * A segment found on disk at open: what it holds has its blocks, and it reserves ahead only once
 * RESERVE_AFTER_BYTES more is written to it.
 */
export function reopenedReserve(seg: Segment): void {
  seg.reservedTo = seg.size;
  seg.reserveAfter = seg.size + RESERVE_AFTER_BYTES;
}

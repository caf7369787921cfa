/**
 * Cutting a log back (a follower whose log parted from its leader's, docs/cluster.md): the
 * segments after the one holding the cut go, and that one is cut at the start of the first batch
 * that reaches the cut offset, made the active segment again (opened for writing) and its index
 * and offsets rebuilt from what stays. Whole batches only: a batch that straddles the cut goes
 * entirely, so the log may end a little before the offset asked for; the new end is returned.
 *
 * The caller makes sure nothing is written meanwhile (the write path is idle, appends refused).
 */
import { open, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { batchLastOffset, walkableBatchSize } from "../format/batch-header.js";
import { HEADER_SIZE } from "../format/layout.js";
import { settleReserve } from "./block-reserve.js";
import { type FileOps, syncDir } from "./file-ops.js";
import { Segment } from "./segment.js";
import type { SegmentList } from "./segment-list.js";
import type { SegmentPreparer } from "./segment-preparer.js";
import { scanSegment } from "./segment-scan.js";
import type { TailCache } from "./tail-cache.js";

export interface TruncationContext {
  segments: SegmentList;
  tail: TailCache;
  ops: FileOps;
  indexIntervalBytes: number;
  /** A compacted log: base offsets need only increase. */
  allowGaps: boolean;
}

/** Cuts the log so that no batch holding `offset` or later stays; resolves with the new log end. */
export async function cutLog(ctx: TruncationContext, offset: number): Promise<number> {
  const { segments, tail, ops } = ctx;
  const seg = segments.find(offset) ?? segments.all[0]!;
  const wasActive = segments.active === seg;
  // Readers get copies from the cache, never views: forgetting it all is safe, and rare.
  tail.clear();
  for (const gone of segments.removeAfter(seg)) {
    gone.deleted = true;
    await gone.sealing;
    await settleReserve(gone);
    await gone.closeFile().catch(() => {});
    await unlink(gone.walPath).catch(() => {});
    await unlink(gone.indexPath).catch(() => {});
  }
  await seg.sealing;
  await settleReserve(seg);
  const cut = await cutPosition(seg, offset);
  let file = seg.openFile;
  if (!wasActive || file === null) {
    // A closed segment becomes the active one again: its file, open for reading if at all, is
    // reopened for writing. The active segment already has its file open for writing.
    await seg.closeFile();
    file = await open(seg.walPath, "r+");
    seg.setFile(file);
  }
  await ops.truncate(file, cut);
  await ops.datasync(file);
  const scratch = new Segment(dirname(seg.walPath), seg.baseOffset, seg.rollStartMs);
  await scanSegment(file, cut, scratch, 0, seg.baseOffset, {
    indexIntervalBytes: ctx.indexIntervalBytes,
    allowGaps: ctx.allowGaps,
  });
  seg.index = scratch.index;
  seg.nextOffset = scratch.nextOffset;
  seg.maxTimestamp.set(scratch.maxTimestamp);
  seg.firstTimestampMs = scratch.firstTimestampMs;
  seg.damaged = seg.damaged.filter((r) => r.position + r.length <= cut);
  seg.size = cut;
  seg.fileSize = cut;
  seg.reservedTo = cut;
  // The active segment has no index file until a clean close writes it (recovery scans it).
  await unlink(seg.indexPath).catch(() => {});
  await syncDir(dirname(seg.walPath));
  return seg.nextOffset;
}

/**
 * Empties the log and starts it again at `offset` (a follower so far behind that its leader no
 * longer holds the records it lacks): the first segment is cut empty, the others go, and a fresh
 * segment at `offset` replaces it.
 */
export async function restartLog(
  ctx: TruncationContext,
  offset: number,
  preparer: SegmentPreparer,
  segmentBytes: number,
): Promise<void> {
  const { segments } = ctx;
  await cutLog(ctx, segments.startOffset);
  const old = segments.active;
  if (old.baseOffset === offset) return;
  const dir = dirname(old.walPath);
  const seg = new Segment(dir, offset, Date.now());
  // No blocks until the first data, as for a new log (block-reserve.ts).
  const prepared = await preparer.take(segmentBytes, seg.walPath, false);
  seg.setFile(prepared.file);
  seg.fileSize = prepared.size;
  seg.reservedTo = prepared.reserved;
  segments.restart(seg);
  old.deleted = true;
  await old.closeFile().catch(() => {});
  await unlink(old.walPath).catch(() => {});
  await unlink(old.indexPath).catch(() => {});
  await syncDir(dir);
}

/** The file position of the first batch of `seg` whose last offset is at or past `offset`. */
async function cutPosition(seg: Segment, offset: number): Promise<number> {
  if (offset <= seg.baseOffset) return 0;
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  let pos = seg.index.positionFor(offset - seg.baseOffset);
  while (pos + HEADER_SIZE <= seg.size) {
    if ((await seg.read(header, HEADER_SIZE, pos)) < HEADER_SIZE) break;
    const size = walkableBatchSize(header, 0);
    if (size < 0 || batchLastOffset(header, 0) >= offset) break;
    pos += size;
  }
  return Math.min(pos, seg.size);
}

/**
 * Opening a partition directory: find the segments, trust a segment's index only when it agrees
 * with the data, scan the rest, cut the torn tail of the last
 * segment, quarantine damage anywhere else (never deleting data; docs/design.md, recovery), and
 * rebuild missing indexes atomically. The last segment has an index only after a clean stop (the
 * log writes it as it closes, and the open removes it before anything is appended), so after a
 * crash it is scanned whole, and after a clean stop no segment is: each index is checked by reading
 * only what follows its last entry.
 */
import type { FileHandle } from "node:fs/promises";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Logger } from "pino";
import { MIN_BATCH_SIZE } from "../format/layout.js";
import { readTimestampMs } from "../format/timestamp.js";
import type { LogConfig } from "./config.js";
import type { DamagedRange } from "./damaged-range.js";
import { DROPPED_NAME, isDropped, type OffsetRange, readDropped } from "./dropped-ranges.js";
import { readFully, syncDir, writeFileAtomically } from "./file-ops.js";
import { CHECKPOINT_SUFFIX, checkpointPath } from "./index-checkpoint.js";
import { Segment } from "./segment.js";
import { INDEX_ENTRY_BYTES, SegmentIndex } from "./segment-index.js";
import { indexPath, PREPARED_NAME, parseSegmentName, TMP_SUFFIX, walPath } from "./segment-name.js";
import { type ScanResult, scanSegment } from "./segment-scan.js";

/**
 * Recovers the segments in `dir` (which must exist, its file names `names`), oldest first; the
 * last one, the active segment, is returned with its file open for writing and no `.idx` file. An
 * empty directory yields no segments. Segments starting below `cleanedEnd` were compacted: their
 * batches' offsets need only increase, and a gap may follow them. `closedCleanly` says the active
 * segment's index agreed with its data: the log was closed, its data fsynced, and nothing was scanned.
 */
export async function recoverSegments(
  dir: string,
  config: LogConfig,
  logger: Logger | undefined,
  nowMs: number,
  cleanedEnd: number,
  names: readonly string[],
  pagesKept = false,
): Promise<RecoveredSegments> {
  const wals: number[] = [];
  const indexes = new Set<number>();
  const checkpoints: number[] = [];
  for (const name of names) {
    if (name === PREPARED_NAME || name.endsWith(TMP_SUFFIX)) {
      await unlink(join(dir, name));
      continue;
    }
    if (name.endsWith(CHECKPOINT_SUFFIX)) {
      const of = parseSegmentName(name.slice(0, -CHECKPOINT_SUFFIX.length));
      if (of !== null) checkpoints.push(of.baseOffset);
      continue;
    }
    const parsed = parseSegmentName(name);
    if (parsed === null) continue;
    if (parsed.kind === "wal") wals.push(parsed.baseOffset);
    else indexes.add(parsed.baseOffset);
  }
  wals.sort((a, b) => a - b);
  const walSet = new Set(wals);
  for (const base of indexes) {
    if (!walSet.has(base)) await unlink(indexPath(dir, base));
  }
  // Only the last segment's checkpoint counts; others were left by a roll (the seal wrote the .idx).
  const lastBase = wals.at(-1);
  for (const base of checkpoints) {
    if (base !== lastBase) await unlink(indexPath(dir, base) + CHECKPOINT_SUFFIX).catch(() => {});
  }

  // Most partitions never had offsets dropped: no read for a file that is not there.
  const dropped = names.includes(DROPPED_NAME) ? await readDropped(dir) : [];
  const segments: Segment[] = [];
  let closedCleanly = false;
  let checkpointUsed = false;
  let activeFile: FileHandle | null = null;
  for (let i = 0; i < wals.length; i++) {
    const base = wals[i]!;
    const isLast = i === wals.length - 1;
    const prev = segments.at(-1);
    const gap = prev === undefined ? 0 : base - prev.nextOffset;
    if (gap < 0) {
      await setAside(wals.slice(i), dir, prev!.nextOffset, logger);
      break;
    }
    if (gap > 0 && base > cleanedEnd && !isDropped(dropped, prev!.nextOffset, base - 1)) {
      // A segment file is missing from the middle of the log: what follows is kept, the gap quarantined.
      quarantine(prev!, logger, {
        position: prev!.size,
        length: 0,
        firstOffset: prev!.nextOffset,
        lastOffset: base - 1,
        reason: "no segment file holds these offsets",
      });
    }
    const file = await open(walPath(dir, base), "r+");
    let keep = false;
    try {
      const recovery: SegmentRecovery = {
        hasIndex: indexes.has(base),
        nextBase: isLast ? -1 : wals[i + 1]!,
        config,
        logger,
        nowMs,
        allowGaps: base < cleanedEnd,
        dropped,
        checkpoint: isLast && checkpoints.includes(base),
        pagesKept,
        indexed: false,
      };
      segments.push(await recoverSegment(dir, base, file, recovery));
      closedCleanly = isLast && recovery.indexed;
      checkpointUsed = recovery.checkpoint;
      // The active segment keeps the handle it was recovered with (a segment set aside below has none).
      keep = isLast;
    } finally {
      if (keep) activeFile = file;
      else await file.close();
    }
  }

  const active = segments.at(-1);
  if (active !== undefined) {
    active.setFile(activeFile ?? (await open(active.walPath, "r+")));
    active.fileSize = active.size;
    active.rollStartMs = active.firstTimestampMs >= 0 ? Math.min(active.firstTimestampMs, nowMs) : nowMs;
    // The active segment's index lives in memory, and its .idx would say "closed cleanly" after
    // the next append: a clean stop's index becomes the checkpoint (index-checkpoint.ts). A
    // checkpoint that recovery could not use, or that misses damage found since, goes.
    const checkpoint = checkpointPath(active);
    if (closedCleanly && active.damaged.length === 0) await rename(active.indexPath, checkpoint);
    else {
      if (indexes.has(active.baseOffset)) await unlink(active.indexPath).catch(() => {});
      const stale = !checkpointUsed || active.damaged.length > 0;
      if (checkpoints.includes(active.baseOffset) && stale) await unlink(checkpoint).catch(() => {});
    }
  }
  return { segments, closedCleanly };
}

export interface RecoveredSegments {
  segments: Segment[];
  /** The active segment was taken from its index: a clean stop left it, every byte fsynced. */
  closedCleanly: boolean;
}

interface SegmentRecovery {
  hasIndex: boolean;
  /** The next segment's base offset, or -1 for the last segment (the one that was being written). */
  nextBase: number;
  config: LogConfig;
  logger: Logger | undefined;
  nowMs: number;
  allowGaps: boolean;
  dropped: readonly OffsetRange[];
  /** The last segment has a checkpoint of its index (index-checkpoint.ts). */
  checkpoint: boolean;
  /** The page cache outlived the crash (LogOptions.pagesKept): no written page can be missing. */
  pagesKept: boolean;
  /** Set by recoverSegment: the segment was taken from its index, not scanned. */
  indexed: boolean;
}

async function recoverSegment(
  dir: string,
  base: number,
  file: FileHandle,
  r: SegmentRecovery,
): Promise<Segment> {
  const { config, logger } = r;
  const isLast = r.nextBase < 0;
  const st = await file.stat();
  const fileSize = st.size;
  const name = basename(walPath(dir, base));
  if (r.hasIndex) {
    const seg = new Segment(dir, base, r.nowMs);
    if (await loadIndex(seg, file, fileSize, config.indexIntervalBytes, r)) {
      r.indexed = true;
      return seg;
    }
    logger?.warn({ segment: name }, "segment index disagrees with its data; rescanning the segment");
  }
  const scanOptions = {
    indexIntervalBytes: config.indexIntervalBytes,
    allowGaps: r.allowGaps,
    dropped: r.dropped,
    // Zeros or garbage that good batches follow are damage even in the last segment (a page lost
    // in a crash); only what no good batch follows is the torn tail cut below.
    quarantine: true,
  };
  const limit = isLast ? searchLimit(st, fileSize, r.pagesKept) : fileSize;
  let seg = new Segment(dir, base, r.nowMs);
  let result: ScanResult | null = null;
  if (r.checkpoint && (await readIndex(seg, checkpointPath(seg), fileSize))) {
    // After a crash: only what follows the checkpoint's last entry is scanned, if its batch is there.
    const last = seg.index.count - 1;
    const from = seg.index.position(last);
    result = await scanSegment(file, limit, seg, from, base + seg.index.relativeOffset(last), scanOptions);
    if (result.end === from || seg.damaged.length > 0) {
      logger?.warn(
        { segment: name },
        "segment index checkpoint disagrees with its data; rescanning the segment",
      );
      seg = new Segment(dir, base, r.nowMs);
      result = null;
    }
  }
  // A checkpoint not used goes (recoverSegments): data appended later could land where it points.
  r.checkpoint &&= result !== null;
  result ??= await scanSegment(file, limit, seg, 0, base, scanOptions);
  seg.size = result.end;
  for (const range of seg.damaged) logDamage(logger, seg, range);
  if (result.end < fileSize) {
    if (!isLast && r.nextBase > seg.nextOffset) {
      // Nothing good follows in a closed segment, but the next segment says offsets were here.
      seg.size = fileSize;
      quarantine(seg, logger, {
        position: result.end,
        length: fileSize - result.end,
        firstOffset: seg.nextOffset,
        lastOffset: r.nextBase - 1,
        reason: result.detail || "zeros where a batch should be",
      });
    } else {
      // The torn tail of the last segment, or bytes of a closed one that held no offsets (its
      // preallocated end when a crash came before the seal).
      await file.truncate(result.end);
      report(logger, name, seg, fileSize, result);
    }
  }
  if (seg.damaged.length > 0) {
    // No index for a damaged segment: each open rescans it and finds its ranges again.
    await unlink(seg.indexPath).catch(() => {});
  } else if (!isLast && seg.size > 0) {
    await writeFileAtomically(seg.indexPath, dir, seg.index.bytes());
    if (!r.hasIndex) logger?.info({ segment: name }, "rebuilt missing segment index");
  }
  return seg;
}

/**
 * How far into the last segment data may lie. Its file is segmentBytes long from its creation
 * (ftruncate), and after a crash the search for good batches past zeros would read all of it: 128
 * MiB of holes per partition, 20 s for 200 partitions on a loaded machine. Data lies in allocated
 * blocks, written from the start and reserved ahead (block-reserve.ts), so it cannot lie much past
 * as many bytes as are allocated; twice that, plus 1 MiB, leaves room for pages a crash lost as
 * holes before data that survived. What lies past the limit is holes, cut with the torn tail.
 * When only the process crashed (`pagesKept`: the same boot, so the page cache kept every page it
 * wrote) no page can be lost and data lies within the allocated blocks (which count pages not yet
 * written back): the search stops there, and a few KiB of zeros are read instead of about 1 MiB.
 */
export function searchLimit(
  st: { blocks: number; size: number },
  fileSize: number,
  pagesKept = false,
): number {
  // A platform that does not report blocks: search everything, as before.
  if (!Number.isFinite(st.blocks)) return fileSize;
  if (pagesKept) return Math.min(fileSize, st.blocks * 512);
  return Math.min(fileSize, 2 * st.blocks * 512 + 1024 * 1024);
}

/**
 * Scans a segment again after a read found a batch in it failing its check, and quarantines what
 * it finds; its data and offsets do not change, and its `.idx` is removed (so the next open scans
 * it too). A closed segment's index and ranges are replaced at once. The active segment is being
 * appended to: only its bytes written so far are scanned, the ranges found are added to its own,
 * and its index is left alone (a read steps over a range without an entry after it).
 */
export async function rescanSegment(
  seg: Segment,
  indexIntervalBytes: number,
  allowGaps: boolean,
  logger: Logger | undefined,
  active: boolean,
): Promise<void> {
  const size = seg.size;
  const nextOffset = seg.nextOffset;
  const file = await open(seg.walPath, "r");
  try {
    const scratch = new Segment(dirname(seg.walPath), seg.baseOffset, seg.rollStartMs);
    const dropped = await readDropped(dirname(seg.walPath));
    const options = { indexIntervalBytes, allowGaps, quarantine: true, dropped };
    const result = await scanSegment(file, size, scratch, 0, seg.baseOffset, options);
    if (result.end < size) {
      scratch.markDamaged({
        position: result.end,
        length: size - result.end,
        firstOffset: scratch.nextOffset,
        lastOffset: nextOffset - 1,
        reason: result.detail || "zeros where a batch should be",
      });
    }
    if (!active) seg.index = scratch.index;
    for (const range of scratch.damaged) {
      if (seg.damaged.some((r) => r.position === range.position)) continue;
      addRange(seg, range);
      logDamage(logger, seg, range);
    }
  } finally {
    await file.close();
  }
  if (seg.damaged.length > 0) await unlink(seg.indexPath).catch(() => {});
}

/** Adds `range` to the segment's ranges, which stay in file order. */
function addRange(seg: Segment, range: DamagedRange): void {
  const at = seg.damaged.findIndex((r) => r.position > range.position);
  if (at < 0) seg.damaged.push(range);
  else seg.damaged.splice(at, 0, range);
}

/**
 * Loads a closed segment's `.idx` when it agrees with the data: well-formed, its last entry points
 * at a whole batch with the entry's offset, and from there whole batches run to the end of the file.
 * Only that tail (about indexIntervalBytes) is read, never the whole segment.
 */
async function loadIndex(
  seg: Segment,
  wal: FileHandle,
  fileSize: number,
  interval: number,
  r: Pick<SegmentRecovery, "allowGaps" | "dropped">,
): Promise<boolean> {
  if (!(await readIndex(seg, seg.indexPath, fileSize))) return false;
  const last = seg.index.count - 1;
  const result = await scanSegment(
    wal,
    fileSize,
    seg,
    seg.index.position(last),
    seg.baseOffset + seg.index.relativeOffset(last),
    { indexIntervalBytes: interval, allowGaps: r.allowGaps, dropped: r.dropped },
  );
  if (result.stop !== "end") return false;
  seg.size = fileSize;
  return true;
}

/**
 * Reads the index file at `path` into `seg` when it is well-formed for a segment file of
 * `fileSize` bytes, with the timestamps it gives (the newest so far, the first batch's): whether
 * its entries agree with the data is for the caller to check.
 */
async function readIndex(seg: Segment, path: string, fileSize: number): Promise<boolean> {
  let bytes: Buffer;
  let size: number;
  let file: FileHandle;
  try {
    file = await open(path, "r");
  } catch {
    return false;
  }
  try {
    size = (await file.stat()).size;
    // Every entry stands for at least one batch, so a longer file cannot be right: never allocate it.
    const maxEntries = Math.floor(fileSize / MIN_BATCH_SIZE) + 1;
    if (size === 0 || size % INDEX_ENTRY_BYTES !== 0 || size > maxEntries * INDEX_ENTRY_BYTES) return false;
    bytes = Buffer.allocUnsafe(size);
    if ((await readFully(file, bytes, size, 0)) !== size) return false;
  } finally {
    await file.close();
  }
  const index = new SegmentIndex(bytes);
  if (index.count * INDEX_ENTRY_BYTES !== size || !index.isWellFormed(fileSize)) return false;
  seg.index = index;
  index.copyTimestamp(index.count - 1, seg.maxTimestamp, 0);
  // The first entry is the first batch: the segment's age for segmentMs counts from it.
  const ts = Buffer.alloc(8);
  index.copyTimestamp(0, ts, 0);
  seg.firstTimestampMs = readTimestampMs(ts, 0);
  return true;
}

function report(
  logger: Logger | undefined,
  name: string,
  seg: Segment,
  fileSize: number,
  result: ScanResult,
): void {
  const fields = {
    segment: name,
    position: result.end,
    cutBytes: fileSize - result.end,
    nextOffset: seg.nextOffset,
    reason: result.stop,
    detail: result.detail,
  };
  if (result.stop === "zero-tail") logger?.debug(fields, "cut the unused preallocated tail of a segment");
  else logger?.warn(fields, "cut a torn or corrupt tail off a segment");
}

/**
 * Sets aside (renames, never deletes) segments that overlap the log before them: two batches
 * cannot hold one offset, and the log never writes such a segment, so a person should look.
 */
async function setAside(
  bases: number[],
  dir: string,
  expected: number,
  logger: Logger | undefined,
): Promise<void> {
  logger?.error(
    { expectedOffset: expected, setAside: bases.length, firstSetAside: bases[0] },
    `segments overlapping the log before them were renamed to *${OVERLAP_SUFFIX}`,
  );
  for (const base of bases) {
    await rename(walPath(dir, base), walPath(dir, base) + OVERLAP_SUFFIX).catch(() => {});
    await unlink(indexPath(dir, base)).catch(() => {});
  }
  await syncDir(dir);
}

const OVERLAP_SUFFIX = ".overlapping";

function quarantine(seg: Segment, logger: Logger | undefined, range: DamagedRange): void {
  seg.markDamaged(range);
  logDamage(logger, seg, range);
}

/** Damage is logged loudly: it is data an operator must know about (conch log verify / repair). */
export function logDamage(logger: Logger | undefined, seg: Segment, range: DamagedRange): void {
  logger?.error(
    {
      segment: basename(seg.walPath),
      position: range.position,
      bytes: range.length,
      firstOffset: range.firstOffset,
      lastOffset: range.lastOffset,
      reason: range.reason,
    },
    "stored data failed its check: quarantined, later data kept",
  );
}

/**
 * Opening a partition directory: find the segments, trust a closed segment's index only when it
 * agrees with the data, scan the rest (always the last segment), cut torn or corrupt tails, drop
 * segments that do not follow on from the one before, and rebuild missing indexes atomically.
 */
import type { FileHandle } from "node:fs/promises";
import { open, readdir, readFile, stat, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Logger } from "pino";
import { MIN_BATCH_SIZE } from "../format/layout.js";
import type { LogConfig } from "./config.js";
import { syncDir, writeFileAtomically } from "./file-ops.js";
import { Segment } from "./segment.js";
import { INDEX_ENTRY_BYTES, SegmentIndex } from "./segment-index.js";
import { indexPath, PREPARED_NAME, parseSegmentName, TMP_SUFFIX, walPath } from "./segment-name.js";
import { type ScanResult, scanSegment } from "./segment-scan.js";

/**
 * Recovers the segments in `dir` (which must exist), oldest first; the last one, the active
 * segment, is returned with its file open for writing and no `.idx` file. An empty directory
 * yields no segments. Segments starting below `cleanedEnd` were compacted: their batches' offsets
 * need only increase, and a gap may follow them.
 */
export async function recoverSegments(
  dir: string,
  config: LogConfig,
  logger: Logger | undefined,
  nowMs: number,
  cleanedEnd = 0,
): Promise<Segment[]> {
  const names = await readdir(dir);
  const wals: number[] = [];
  const indexes = new Set<number>();
  for (const name of names) {
    if (name === PREPARED_NAME || name.endsWith(TMP_SUFFIX)) {
      await unlink(join(dir, name));
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

  const segments: Segment[] = [];
  for (let i = 0; i < wals.length; i++) {
    const base = wals[i]!;
    const isLast = i === wals.length - 1;
    const prev = segments.at(-1);
    const gap = prev === undefined ? 0 : base - prev.nextOffset;
    if (gap < 0 || (gap > 0 && base > cleanedEnd)) {
      await dropFrom(wals.slice(i), dir, prev!.nextOffset, logger);
      break;
    }
    const file = await open(walPath(dir, base), "r+");
    try {
      segments.push(
        await recoverSegment(
          dir,
          base,
          file,
          !isLast && indexes.has(base),
          isLast,
          config,
          logger,
          nowMs,
          base < cleanedEnd,
        ),
      );
    } finally {
      await file.close();
    }
  }

  const active = segments.at(-1);
  if (active !== undefined) {
    active.setFile(await open(active.walPath, "r+"));
    active.fileSize = active.size;
    active.rollStartMs = active.firstTimestampMs >= 0 ? Math.min(active.firstTimestampMs, nowMs) : nowMs;
    // The active segment's index lives in memory; a file would go stale with the next append.
    await unlink(active.indexPath).catch(() => {});
  }
  return segments;
}

async function recoverSegment(
  dir: string,
  base: number,
  file: FileHandle,
  hasIndex: boolean,
  isLast: boolean,
  config: LogConfig,
  logger: Logger | undefined,
  nowMs: number,
  allowGaps: boolean,
): Promise<Segment> {
  const fileSize = (await file.stat()).size;
  const name = basename(walPath(dir, base));
  if (hasIndex) {
    const seg = new Segment(dir, base, nowMs);
    if (await loadIndex(seg, file, fileSize, config.indexIntervalBytes, allowGaps)) return seg;
    logger?.warn({ segment: name }, "segment index disagrees with its data; rescanning the segment");
  }
  const seg = new Segment(dir, base, nowMs);
  const result = await scanSegment(file, fileSize, seg, 0, base, config.indexIntervalBytes, allowGaps);
  seg.size = result.end;
  if (result.end < fileSize) {
    await file.truncate(result.end);
    report(logger, name, seg, fileSize, result);
  }
  if (!isLast && seg.size > 0) {
    await writeFileAtomically(seg.indexPath, dir, seg.index.bytes());
    if (!hasIndex) logger?.info({ segment: name }, "rebuilt missing segment index");
  }
  return seg;
}

/**
 * Loads a closed segment's `.idx` when it agrees with the data: well-formed, its last entry points
 * at a whole batch with the entry's offset, and from there whole batches run to the end of the file.
 * Only that tail (about indexIntervalBytes) is read, never the whole segment.
 */
async function loadIndex(
  seg: Segment,
  file: FileHandle,
  fileSize: number,
  interval: number,
  allowGaps: boolean,
): Promise<boolean> {
  let size: number;
  try {
    size = (await stat(seg.indexPath)).size;
  } catch {
    return false;
  }
  // Every entry stands for at least one batch, so a longer file cannot be right: never allocate it.
  const maxEntries = Math.floor(fileSize / MIN_BATCH_SIZE) + 1;
  if (size === 0 || size % INDEX_ENTRY_BYTES !== 0 || size > maxEntries * INDEX_ENTRY_BYTES) return false;
  const index = new SegmentIndex(await readFile(seg.indexPath));
  if (index.count * INDEX_ENTRY_BYTES !== size || !index.isWellFormed(fileSize)) return false;
  const last = index.count - 1;
  seg.index = index;
  index.copyTimestamp(last, seg.maxTimestamp, 0);
  const result = await scanSegment(
    file,
    fileSize,
    seg,
    index.position(last),
    seg.baseOffset + index.relativeOffset(last),
    interval,
    allowGaps,
  );
  if (result.stop !== "end") return false;
  seg.size = fileSize;
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

/** Deletes segments that do not follow on from the log before them. */
async function dropFrom(
  bases: number[],
  dir: string,
  expected: number,
  logger: Logger | undefined,
): Promise<void> {
  logger?.warn(
    { expectedOffset: expected, droppedSegments: bases.length, firstDropped: bases[0] },
    "dropping segments after a gap or corruption in the log",
  );
  for (const base of bases) {
    await unlink(walPath(dir, base)).catch(() => {});
    await unlink(indexPath(dir, base)).catch(() => {});
  }
  await syncDir(dir);
}

/**
 * Segment file names: the segment's base offset as 20 decimal digits, so that names sort like
 * offsets, with `.wal` for the batches and `.idx` for the offset index.
 */
import { MAX_OFFSET } from "../format/layout.js";
import { childPath } from "./child-path.js";

export const WAL_SUFFIX = ".wal";
export const INDEX_SUFFIX = ".idx";
/** The next segment's file while it is being prepared ahead of a roll; never a segment name. */
export const PREPARED_NAME = "next.wal.prepared";
/** Temporary files left by an interrupted atomic write. */
export const TMP_SUFFIX = ".tmp";

const NAME = /^(\d{20})\.(wal|idx)$/;

export function segmentStem(baseOffset: number): string {
  return String(baseOffset).padStart(20, "0");
}

export function walPath(dir: string, baseOffset: number): string {
  return childPath(dir, segmentStem(baseOffset) + WAL_SUFFIX);
}

export function indexPath(dir: string, baseOffset: number): string {
  return childPath(dir, segmentStem(baseOffset) + INDEX_SUFFIX);
}

/** What a directory entry is, as far as the log is concerned. */
export interface ParsedName {
  kind: "wal" | "idx";
  baseOffset: number;
}

/** Parses a segment file name; null for any other name (including offsets past 2^53 - 1). */
export function parseSegmentName(name: string): ParsedName | null {
  const m = NAME.exec(name);
  if (m === null) return null;
  const baseOffset = Number(m[1]);
  if (baseOffset > MAX_OFFSET) return null;
  return { kind: m[2] === "wal" ? "wal" : "idx", baseOffset };
}

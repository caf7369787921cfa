/**
 * The shared log as its open finds it: every segment read, in order, each entry's length bounded
 * before it is read and its CRC checked before it is used. The first entry that fails ends the
 * log: its segment is cut there and every later segment deleted, so what is kept is a prefix of
 * what was written, as a partition log's torn tail is cut (docs/shared-log.md, "Crash, replay and
 * stops").
 */
import { ftruncateSync, unlinkSync } from "node:fs";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import type { Logger } from "pino";
import { childPath } from "../child-path.js";
import { checkEntry, EntryStatus, readEntry, type SharedEntry } from "./entry.js";
import { parseSegmentFileName, SharedSegment, segmentFileName } from "./segment.js";

/** An entry read back, with its position. */
export interface ReplayEntry extends SharedEntry {
  readonly position: number;
}

export interface ReadBack {
  /** The segments kept, oldest first; at least one (a new one when there were none). */
  readonly segments: SharedSegment[];
  /** Every entry kept, in order. */
  readonly entries: ReplayEntry[];
}

const STATUS_NAMES = new Map<number, string>(Object.entries(EntryStatus).map(([k, v]) => [v, k]));

/**
 * Reads the shared log in `dir` (made when missing). A segment file longer than `maxFileBytes`
 * is refused before it is read: the log never writes one.
 */
export async function readBack(
  dir: string,
  maxEntryBytes: number,
  maxFileBytes: number,
  logger: Logger | undefined,
): Promise<ReadBack> {
  await mkdir(dir, { recursive: true });
  const bases = (await readdir(dir))
    .map(parseSegmentFileName)
    .filter((b): b is number => b !== null)
    .sort((a, b) => a - b);
  const segments: SharedSegment[] = [];
  const entries: ReplayEntry[] = [];
  /** Where the log was cut, and why (an EntryStatus name). */
  let cut: { position: number; reason: string } | null = null;
  let i = 0;
  for (; i < bases.length && cut === null; i++) {
    const base = bases[i]!;
    const path = childPath(dir, segmentFileName(base));
    const expected = segments.length === 0 ? base : segments.at(-1)!.end;
    if (base !== expected) {
      cut = { position: expected, reason: `segment ${base} does not start where the one before ends` };
      break;
    }
    const { size } = await stat(path);
    if (size > maxFileBytes) {
      throw new Error(`${path} is ${size} bytes, more than a shared log segment may hold (${maxFileBytes})`);
    }
    const buf = await readFile(path);
    let at = 0;
    while (at < buf.length) {
      const n = checkEntry(buf, at, buf.length, maxEntryBytes);
      if (n < 0) {
        cut = { position: base + at, reason: STATUS_NAMES.get(n) ?? String(n) };
        break;
      }
      entries.push({ position: base + at, ...readEntry(buf, at, n) });
      at += n;
    }
    const segment = SharedSegment.reopen(dir, base, at);
    if (at < buf.length) ftruncateSync(segment.fd, at);
    segments.push(segment);
  }
  // Everything after a cut goes: the log kept is a prefix of what was written.
  const dropped = bases.slice(cut === null ? bases.length : i);
  for (const base of dropped) unlinkSync(childPath(dir, segmentFileName(base)));
  if (cut !== null) {
    logger?.warn(
      { dir, position: cut.position, reason: cut.reason, segmentsDropped: dropped.length },
      "shared log cut at its first unreadable entry",
    );
  }
  if (segments.length === 0) segments.push(SharedSegment.create(dir, 0));
  return { segments, entries };
}

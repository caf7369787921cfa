/**
 * Read-ahead for direct reads. A read with direct I/O bypasses the page cache, and with it the
 * kernel's readahead: a consumer reading a cold segment from start to end made one disk read at a
 * time, each started only once the last one's batches were checked and sent, so the disk and the
 * event loop took turns. Once a direct read continues where the one before it on the same segment
 * left off, the reader starts the next one as soon as it knows where that starts (before checking
 * and sending what it read), into a buffer of its own; the consumer's next read takes it if it
 * starts there, and drops it otherwise.
 *
 * Bounded: a segment holds at most one read-ahead, and the broker at most MAX_LIVE (the oldest is
 * dropped for a new one), none made with one of the last MAX_LIVE aligned buffers that could be
 * made (those stay for reads). A consumer that stops mid-segment leaves one read buffer held until
 * another read-ahead takes its place or the segment closes. A dropped read-ahead hands its buffer
 * back once its read has ended. What a read-ahead read is used only while the segment is closed
 * and as long as when it was read; its batches are checked like any read's (log-reader.ts).
 *
 * No byte is read from the disk twice: a read returns whole batches, so the one it started with
 * usually ends inside a batch it did not return (a fetch of 1 MiB over batches of 200 KiB returned
 * four and left most of a fifth read for nothing, a quarter of what was read). The next read starts
 * at that batch, so a read-ahead is given what the read holds from there on (`ReadBytes`), copies
 * it, and reads from the disk only what follows.
 */
import { DIRECT_ALIGN } from "../format/aligned-buffers.js";
import { releaseReadBuffer, takeAlignedReadBuffer } from "../format/read-buffers.js";
import type { Segment } from "./segment.js";

/** Read-aheads alive at once, broker-wide. */
const MAX_LIVE = 8;

export class ReadAhead {
  readonly seg: Segment;
  /** File position and length read (aligned). */
  readonly from: number;
  readonly span: number;
  /** The segment's size when the read started: a segment cut since is not served from it. */
  readonly size: number;
  readonly buf: Buffer;
  /** The bytes read (those copied from `have` first); never rejects (a failed read reads as -1). */
  readonly done: Promise<number>;

  constructor(seg: Segment, from: number, span: number, buf: Buffer, have: ReadBytes | null) {
    this.seg = seg;
    this.from = from;
    this.span = span;
    this.size = seg.size;
    this.buf = buf;
    let kept = 0;
    if (have !== null) {
      kept = keptBytes(have, from, span);
      if (kept > 0) have.bytes.copy(buf, 0, from - have.at, from - have.at + kept);
      counts.keptBytes += kept;
    }
    this.done =
      kept === span
        ? Promise.resolve(kept)
        : seg.readDirect(buf.subarray(kept), span - kept, from + kept).then(
            (n) => kept + n,
            () => -1,
          );
  }
}

/** Bytes of a segment already read: `bytes[0]` is at file position `at`. */
export interface ReadBytes {
  bytes: Buffer;
  at: number;
}

/**
 * How many bytes from `from` on (at most `span`) `have` holds, in whole aligned blocks so that the
 * rest is read from an aligned position into an aligned place; 0 unless it holds `from`.
 */
function keptBytes(have: ReadBytes, from: number, span: number): number {
  if (from < have.at) return 0;
  const end = have.at + have.bytes.length;
  return Math.max(0, Math.min(end - (end % DIRECT_ALIGN), from + span) - from);
}

const live: ReadAhead[] = [];
const counts = { started: 0, used: 0, dropped: 0, keptBytes: 0 };

/**
 * Starts reading `span` bytes at `from` of `seg` (aligned, as for `Segment.readDirect`) ahead of the
 * read that will want them, in place of any read-ahead the segment had; what `have` holds of them
 * is copied rather than read. Does nothing when no aligned buffer is free.
 */
export function startReadAhead(
  seg: Segment,
  from: number,
  span: number,
  have: ReadBytes | null = null,
): void {
  dropReadAhead(seg);
  if (live.length >= MAX_LIVE) dropReadAhead(live[0]!.seg);
  // Never one of the last aligned buffers that could be made: those stay for reads.
  const buf = takeAlignedReadBuffer(span, MAX_LIVE);
  if (buf === null) return;
  const ahead = new ReadAhead(seg, from, span, buf, have);
  seg.readAhead = ahead;
  live.push(ahead);
  counts.started++;
}

/**
 * The segment's read-ahead if it starts at `from` and still holds what the segment does (taken:
 * its buffer is the caller's to hand back); otherwise null, and any read-ahead the segment had is
 * dropped. Asked only by direct reads, which read closed segments only.
 */
export function takeReadAhead(seg: Segment, from: number): ReadAhead | null {
  const ahead = seg.readAhead;
  if (ahead === null) return null;
  if (ahead.from !== from || seg.deleted || seg.size !== ahead.size) {
    dropReadAhead(seg);
    return null;
  }
  forget(ahead);
  counts.used++;
  return ahead;
}

/** Drops the segment's read-ahead, if any: its buffer is handed back once its read ends. */
export function dropReadAhead(seg: Segment): void {
  const ahead = seg.readAhead;
  if (ahead === null) return;
  forget(ahead);
  counts.dropped++;
  void ahead.done.then(() => releaseReadBuffer(ahead.buf));
}

function forget(ahead: ReadAhead): void {
  ahead.seg.readAhead = null;
  const i = live.indexOf(ahead);
  if (i >= 0) live.splice(i, 1);
}

/**
 * Read-aheads started, used and dropped since the process started, the bytes they copied from the
 * reads before them instead of reading, and the read-aheads alive now (for tests).
 */
export function readAheadCounts(): {
  started: number;
  used: number;
  dropped: number;
  keptBytes: number;
  live: number;
} {
  return { ...counts, live: live.length };
}

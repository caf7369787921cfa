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
 */
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
  /** The bytes read; never rejects (a failed read reads as -1). */
  readonly done: Promise<number>;

  constructor(seg: Segment, from: number, span: number, buf: Buffer) {
    this.seg = seg;
    this.from = from;
    this.span = span;
    this.size = seg.size;
    this.buf = buf;
    this.done = seg.readDirect(buf, span, from).catch(() => -1);
  }
}

const live: ReadAhead[] = [];
const counts = { started: 0, used: 0, dropped: 0 };

/**
 * Starts reading `span` bytes at `from` of `seg` (aligned, as for `Segment.readDirect`) ahead of the
 * read that will want them, in place of any read-ahead the segment had. Does nothing when no aligned
 * buffer is free.
 */
export function startReadAhead(seg: Segment, from: number, span: number): void {
  dropReadAhead(seg);
  if (live.length >= MAX_LIVE) dropReadAhead(live[0]!.seg);
  // Never one of the last aligned buffers that could be made: those stay for reads.
  const buf = takeAlignedReadBuffer(span, MAX_LIVE);
  if (buf === null) return;
  const ahead = new ReadAhead(seg, from, span, buf);
  seg.readAhead = ahead;
  live.push(ahead);
  counts.started++;
}

/**
 * The segment's read-ahead if it starts at `from` and still holds what the segment does (taken:
 * its buffer is the caller's to hand back); otherwise null, and any read-ahead the segment had is
 * dropped.
 */
export function takeReadAhead(seg: Segment, from: number, closed: boolean): ReadAhead | null {
  const ahead = seg.readAhead;
  if (ahead === null) return null;
  if (ahead.from !== from || !closed || seg.deleted || seg.size !== ahead.size) {
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

/** Read-aheads started, used and dropped since the process started, and alive now (for tests). */
export function readAheadCounts(): { started: number; used: number; dropped: number; live: number } {
  return { ...counts, live: live.length };
}

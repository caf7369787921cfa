/**
 * One file of the shared log: named by the position of its first byte (20 digits, `.shared`), so
 * positions grow across files and are never reused. It holds its descriptor from its creation or
 * the shared log's open until it is retired, and counts what must happen before it may be: the
 * deferred spans of its entries not spilled yet, and the fdatasyncs running on its descriptor (a
 * descriptor closed under a running fdatasync would fail it, or sync another file that was given
 * the number).
 */
import { closeSync, openSync } from "node:fs";
import { childPath } from "../child-path.js";

export const SEGMENT_SUFFIX = ".shared";
const NAME = /^(\d{20})\.shared$/;

/** The file name of the segment starting at `base`. */
export function segmentFileName(base: number): string {
  return `${String(base).padStart(20, "0")}${SEGMENT_SUFFIX}`;
}

/** The base position a segment's file name holds, or null for any other name. */
export function parseSegmentFileName(name: string): number | null {
  const m = NAME.exec(name);
  if (m === null) return null;
  const base = Number(m[1]);
  return Number.isSafeInteger(base) ? base : null;
}

export class SharedSegment {
  readonly base: number;
  readonly path: string;
  readonly fd: number;
  /** Bytes written to the file (and queued for it, once given positions). */
  size: number;
  /** Bytes written to the file so far. */
  written: number;
  /** Bytes an ended fdatasync of this file covers. */
  synced: number;
  /** Deferred spans of this segment's entries not yet spilled. */
  unspilled = 0;
  /** fdatasyncs running on `fd`. */
  syncsRunning = 0;
  #closed = false;

  private constructor(base: number, path: string, fd: number, size: number) {
    this.base = base;
    this.path = path;
    this.fd = fd;
    this.size = size;
    this.written = size;
    this.synced = size;
  }

  /** Makes a new, empty segment file (it must not exist). Its directory entry is not durable yet. */
  static create(dir: string, base: number): SharedSegment {
    const path = childPath(dir, segmentFileName(base));
    return new SharedSegment(base, path, openSync(path, "wx+"), 0);
  }

  /** Opens an existing segment file of `size` bytes (all of it read and kept). */
  static reopen(dir: string, base: number, size: number): SharedSegment {
    const path = childPath(dir, segmentFileName(base));
    return new SharedSegment(base, path, openSync(path, "r+"), size);
  }

  /** The position after the segment's last byte. */
  get end(): number {
    return this.base + this.size;
  }

  /** Closes the descriptor; the caller waits until no fdatasync runs on it. */
  close(): void {
    if (this.#closed) return;
    if (this.syncsRunning > 0) throw new Error(`${this.path}: closed under a running fdatasync`);
    this.#closed = true;
    closeSync(this.fd);
  }
}

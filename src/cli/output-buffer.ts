/**
 * Bytes for stdout, gathered into large chunks: writing one chunk per ~64 KiB instead of one
 * write per message is what lets `conch consume` keep up with the broker. `flush()` honours the
 * stream's backpressure (waits for 'drain' when write() returns false), so a slow reader slows the
 * consumer down instead of growing memory.
 */
import type { Writable } from "node:stream";

const CHUNK_BYTES = 64 * 1024;

export class OutputBuffer {
  #out: Writable;
  #chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  #pos = 0;

  constructor(out: Writable) {
    this.#out = out;
  }

  /** Bytes waiting to be flushed. */
  get pendingBytes(): number {
    return this.#pos;
  }

  /** Whether enough is gathered that the caller should flush before adding more. */
  get full(): boolean {
    return this.#pos >= CHUNK_BYTES;
  }

  /** Appends buf[start, end) (copied in place: no view per call). */
  bytes(buf: Buffer, start: number, end: number): void {
    this.#room(end - start);
    this.#pos += buf.copy(this.#chunk, this.#pos, start, end);
  }

  /** Appends one byte (a newline, a separator). */
  byte(b: number): void {
    this.#room(1);
    this.#chunk[this.#pos++] = b;
  }

  /** Appends a string as UTF-8. */
  text(s: string): void {
    this.#room(Buffer.byteLength(s));
    this.#pos += this.#chunk.write(s, this.#pos);
  }

  /** Hands everything gathered to the stream; resolves when the stream can take more. */
  async flush(): Promise<void> {
    if (this.#pos === 0) return;
    const data = this.#chunk.subarray(0, this.#pos);
    // The stream keeps `data` until written, so the next bytes go to a fresh chunk.
    this.#chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.#pos = 0;
    if (!this.#out.write(data)) await drained(this.#out);
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#chunk.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#chunk.length * 2, this.#pos + n));
    this.#chunk.copy(next, 0, 0, this.#pos);
    this.#chunk = next;
  }
}

/** Resolves on 'drain', or when the stream closes or fails (the caller's error handler decides). */
export function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off("drain", done);
      out.off("close", done);
      out.off("error", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
    out.on("error", done);
  });
}

/** Resolves once `out` has handed everything written so far on (or failed to). */
export function settled(out: Writable): Promise<void> {
  // A write that failed has destroyed the stream already, though its error comes a tick later.
  if (out.writableLength === 0 && !out.destroyed) return Promise.resolve();
  return new Promise((resolve) => out.write("", () => resolve()));
}

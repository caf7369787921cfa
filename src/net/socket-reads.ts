/**
 * Chooses the buffer for each socket read (net's `onread`) and hands what was read to a
 * FrameParser, for the broker's connections and the client's alike.
 *
 * - When a frame of at least `DIRECT_READ_MIN_BYTES` is being assembled and nothing else is
 *   queued, the socket reads straight into that frame: a 129 KB produce request or a 1 MiB fetch
 *   response costs neither a socket chunk nor a copy.
 * - Other reads land in a scratch buffer and are copied out at once, the start of a large frame
 *   straight into that frame's buffer (FrameParser.pushCopy). The scratch may be shared by every
 *   connection of the process: its bytes are copied out inside the callback, before the event loop
 *   reads another socket.
 * - With `borrow`, the rest of a scratch read is not copied before `onRead`: frames whole inside
 *   it are views of the scratch (`FrameParser.lastFrameBorrowed`), and whatever `onRead` left
 *   unread is copied out after it returns (`FrameParser.ownBorrowed`). An owner that handles
 *   a read's frames inside `onRead`, copying what it keeps, then copies nothing.
 *
 * Without `onread`, Node allocates a fresh 64 KiB buffer for every read and frees it only when the
 * garbage collector runs; at a few hundred megabytes per second those buffers alone set the pace of
 * young-generation collections.
 */
import type { FrameParser } from "./frame-parser.js";

/** Reads go straight into a frame when at least this much of it is missing. */
export const DIRECT_READ_MIN_BYTES = 32 * 1024;
export const SCRATCH_READ_BYTES = 64 * 1024;

export class SocketReads {
  /** Where bytes go; null drops them (nothing is expected yet, or no longer). */
  parser: FrameParser | null = null;
  /** Called after each read, once its bytes are in the parser. */
  onRead: () => void = () => {};
  /** Called when the bytes read cannot be taken (the stream is broken). */
  onFailure: (err: unknown) => void = () => {};
  #scratch: Buffer;
  #direct: Uint8Array | null = null;
  readonly #borrow: boolean;

  /** `scratch`: a buffer to share with other connections of the process, or one of its own. */
  constructor(scratch: Buffer = Buffer.allocUnsafe(SCRATCH_READ_BYTES), options: { borrow?: boolean } = {}) {
    this.#scratch = scratch;
    this.#borrow = options.borrow === true;
  }

  /** For a socket that reads through 'data' events (TLS): takes one chunk the same way. */
  readonly data = (chunk: Buffer): void => {
    const parser = this.parser;
    if (parser === null) return;
    try {
      parser.push(chunk);
    } catch (err) {
      this.onFailure(err);
      return;
    }
    this.onRead();
  };

  /** The value for net's `onread` option. */
  readonly onread = {
    buffer: (): Uint8Array => {
      this.#direct = this.parser?.readTarget(DIRECT_READ_MIN_BYTES) ?? null;
      return this.#direct ?? this.#scratch;
    },
    // Returning false would pause the socket; flow control is left to its owner (pause/resume).
    callback: (n: number, buf: Uint8Array): boolean => {
      const parser = this.parser;
      const direct = this.#direct;
      this.#direct = null;
      if (parser === null) return true;
      try {
        if (buf === direct) parser.wrote(n);
        else parser.pushCopy(buf.subarray(0, n), this.#borrow);
      } catch (err) {
        this.onFailure(err);
        return true;
      }
      try {
        this.onRead();
      } finally {
        // Before the scratch serves another read.
        if (this.#borrow) parser.ownBorrowed();
      }
      return true;
    },
  };
}

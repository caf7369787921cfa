/**
 * Reassembles length-prefixed frames from socket chunks, for the broker (request frames) and the
 * client (response frames) alike. A frame is the bytes after the 4-byte size field.
 *
 *   parser.push(chunk);
 *   for (let f = parser.next(); f !== null; f = parser.next()) handle(f);
 *
 * - The size field is read first and a size over `maxFrameBytes` is refused (FRAME_TOO_LARGE)
 *   before a byte of the frame is buffered: a forged size never sizes an allocation.
 * - A frame that lies whole inside one chunk is returned as a view of that chunk, with no copy.
 * - A frame split over chunks is copied into one buffer, allocated once at the frame's known size,
 *   as its bytes arrive (so the chunks it came in are released early).
 * - Frames are pulled, not pushed: a caller under backpressure simply stops calling `next()`, and
 *   the unread bytes wait here (`bufferedBytes` says how many) until it resumes.
 * - A reader that can choose where the socket writes (net's `onread`) may ask `readTarget()` for
 *   the rest of the frame being assembled and read into it directly, then report it with
 *   `wrote(n)`: a large frame then costs no intermediate chunk and no copy. Bytes it read into a
 *   buffer of its own go in with `pushCopy`, which copies the start of a large frame straight into
 *   that frame's buffer instead of into a chunk first.
 * - With a FramePool, assembled frames come from its reusable slots; the owner gives a frame back
 *   (`pool.give`) once nothing refers to it.
 * - `pushCopy(bytes, true)` borrows instead of copying: the bytes that are not part of a frame
 *   being assembled are queued as a view of the caller's buffer, frames whole inside them come out
 *   of `next()` as views of it (`lastFrameBorrowed`), and before the caller reuses its buffer it
 *   calls `ownBorrowed()`, which copies whatever of them is still unread. A reader that handles the
 *   frames of each read at once then copies nothing.
 *
 * After FRAME_TOO_LARGE the stream has lost its framing: the parser drops what it holds and throws
 * the same error from every later call.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { FramePool } from "./frame-pool.js";

export interface FrameParserOptions {
  /** The largest size field accepted (bytes after the size field). */
  maxFrameBytes: number;
  /** Where assembled frames come from; without one, each is a new buffer. */
  pool?: FramePool;
}

const EMPTY = Buffer.alloc(0);
/** Consumed queue slots are compacted away once there are this many. */
const COMPACT_AFTER = 64;

export class FrameParser {
  readonly maxFrameBytes: number;
  /** Unread chunks: chunks[head] from headAt on, then the rest whole. */
  #chunks: Buffer[] = [];
  #head = 0;
  #headAt = 0;
  #queued = 0;
  /** Size of the frame being read, or -1 while its size field is not yet read. */
  #size = -1;
  /** The frame being assembled from several chunks, and how much of it is filled. */
  #partial: Buffer | null = null;
  #filled = 0;
  #error: ConchError | null = null;
  #pool: FramePool | null;
  /** The chunk queued by the last borrowing pushCopy, until ownBorrowed(). */
  #borrowed: Buffer | null = null;
  #lastBorrowed = false;

  constructor(options: FrameParserOptions) {
    if (!Number.isInteger(options.maxFrameBytes) || options.maxFrameBytes < 0) {
      throw new RangeError(`maxFrameBytes must be a non-negative integer, not ${options.maxFrameBytes}`);
    }
    this.maxFrameBytes = options.maxFrameBytes;
    this.#pool = options.pool ?? null;
  }

  /** Bytes held: unread chunk bytes plus the buffer of a frame being assembled. */
  get bufferedBytes(): number {
    return this.#queued + (this.#partial === null ? 0 : this.#partial.length);
  }

  /** Whether bytes of an unfinished frame (or size field) are held. */
  get midFrame(): boolean {
    return this.#queued > 0 || this.#size >= 0;
  }

  /** Feeds a socket chunk. The parser keeps a reference to it until its bytes are read. */
  push(chunk: Buffer): void {
    if (this.#error !== null) throw this.#error;
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#queued += chunk.length;
  }

  /**
   * Feeds bytes that the caller will overwrite once this returns: they are copied, the part that
   * belongs to a frame being assembled (or to a frame that starts here and does not end here)
   * straight into that frame's buffer, the rest into a chunk of its own.
   */
  pushCopy(bytes: Uint8Array, borrow = false): void {
    if (this.#error !== null) throw this.#error;
    let at = 0;
    // Only while nothing is queued: queued bytes come first in the stream.
    while (at < bytes.length && this.#queued === 0) {
      if (this.#size < 0) {
        const left = bytes.length - at;
        if (left < 4) break;
        const size =
          bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
        if (size > this.maxFrameBytes) throw this.#fail(size);
        // A frame that ends inside these bytes is left to `next()`, as a view of their chunk.
        if (left - 4 >= size) break;
        this.#size = size;
        at += 4;
      }
      if (this.#partial === null) {
        this.#partial = this.#alloc(this.#size);
        this.#filled = 0;
      }
      const n = Math.min(bytes.length - at, this.#size - this.#filled);
      this.#partial.set(bytes.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      // A completed frame waits for `next()`; what follows it is queued behind it.
      if (this.#filled === this.#size) break;
    }
    if (at >= bytes.length) return;
    if (!borrow) {
      this.push(Buffer.from(bytes.subarray(at)));
      return;
    }
    const view = Buffer.from(bytes.buffer, bytes.byteOffset + at, bytes.length - at);
    this.push(view);
    this.#borrowed = view;
  }

  /** Whether the frame last returned by `next()` is a view of borrowed bytes (see pushCopy). */
  get lastFrameBorrowed(): boolean {
    return this.#lastBorrowed;
  }

  /** Copies the unread part of the borrowed bytes, so that their owner may reuse its buffer. */
  ownBorrowed(): void {
    const borrowed = this.#borrowed;
    if (borrowed === null) return;
    this.#borrowed = null;
    const chunks = this.#chunks;
    const last = chunks.length - 1;
    // Borrowed bytes are always the last chunk queued; consumed chunks are no longer in the queue.
    if (last < this.#head || chunks[last] !== borrowed) return;
    const from = last === this.#head ? this.#headAt : 0;
    chunks[last] = Buffer.from(borrowed.subarray(from));
    if (last === this.#head) this.#headAt = 0;
  }

  /** The next whole frame, or null until more bytes arrive. Throws FRAME_TOO_LARGE. */
  next(): Buffer | null {
    if (this.#error !== null) throw this.#error;
    if (this.#size < 0) {
      if (this.#queued < 4) return null;
      const size = this.#readSize();
      if (size > this.maxFrameBytes) throw this.#fail(size);
      this.#size = size;
      if (size === 0) return this.#complete(EMPTY);
    }
    const size = this.#size;
    if (this.#partial === null) {
      if (this.#queued === 0) return null;
      const head = this.#chunks[this.#head]!;
      const at = this.#headAt;
      if (head.length - at >= size) {
        this.#consume(size);
        const frame = this.#complete(head.subarray(at, at + size));
        this.#lastBorrowed = head === this.#borrowed;
        return frame;
      }
      this.#partial = this.#alloc(size);
      this.#filled = 0;
    }
    const partial = this.#partial;
    while (this.#filled < size && this.#queued > 0) {
      const head = this.#chunks[this.#head]!;
      const at = this.#headAt;
      const n = Math.min(head.length - at, size - this.#filled);
      head.copy(partial, this.#filled, at, at + n);
      this.#filled += n;
      this.#consume(n);
    }
    if (this.#filled < size) return null;
    this.#partial = null;
    return this.#complete(partial);
  }

  /**
   * The unfilled rest of the frame being assembled, when at least `minBytes` of it are missing and
   * every byte pushed so far is consumed (so bytes read into it come next in the stream); else null.
   * Bytes read into it must be reported with `wrote` before anything else is pushed.
   */
  readTarget(minBytes: number): Uint8Array | null {
    const size = this.#size;
    if (this.#error !== null || size < 0 || this.#queued !== 0) return null;
    const filled = this.#partial === null ? 0 : this.#filled;
    if (size - filled < minBytes) return null;
    if (this.#partial === null) {
      this.#partial = this.#alloc(size);
      this.#filled = 0;
    }
    return this.#partial.subarray(this.#filled);
  }

  /** `n` bytes were read into the last `readTarget()`. */
  wrote(n: number): void {
    if (this.#partial === null || n < 0 || this.#filled + n > this.#partial.length) {
      throw new RangeError(`wrote ${n} bytes past the frame being assembled`);
    }
    this.#filled += n;
  }

  #alloc(size: number): Buffer {
    return this.#pool === null ? Buffer.allocUnsafe(size) : this.#pool.take(size);
  }

  #complete(frame: Buffer): Buffer {
    this.#size = -1;
    this.#lastBorrowed = false;
    return frame;
  }

  /** Reads the 4-byte big-endian size field, which may straddle chunks. */
  #readSize(): number {
    let size = 0;
    for (let i = 0; i < 4; i++) {
      size = size * 256 + this.#chunks[this.#head]![this.#headAt]!;
      this.#consume(1);
    }
    return size;
  }

  /** Drops n bytes (n <= what is left of the head chunk) from the front of the queue. */
  #consume(n: number): void {
    this.#queued -= n;
    this.#headAt += n;
    const chunks = this.#chunks;
    if (this.#headAt < chunks[this.#head]!.length) return;
    chunks[this.#head] = EMPTY;
    this.#head++;
    this.#headAt = 0;
    if (this.#head === chunks.length) {
      // Emptied by pops, which keep the array's store: `length = 0` gives it up, and the next
      // push (every socket read) would allocate another.
      for (let i = chunks.length; i > 0; i--) chunks.pop();
      this.#head = 0;
    } else if (this.#head >= COMPACT_AFTER) {
      chunks.splice(0, this.#head);
      this.#head = 0;
    }
  }

  #fail(size: number): ConchError {
    this.#error = new ConchError(
      ErrorCode.FRAME_TOO_LARGE,
      `frame of ${size} bytes is over the maximum of ${this.maxFrameBytes}`,
    );
    this.#chunks = [];
    this.#head = 0;
    this.#headAt = 0;
    this.#queued = 0;
    this.#partial = null;
    this.#borrowed = null;
    return this.#error;
  }
}

/**
 * Where appended batches are copied before they are written: chunks filled one after another, so
 * that a coalesced write is a few large buffers, the written bytes can serve hot reads from memory
 * (tail-cache.ts), and the caller's buffer is neither kept nor modified.
 *
 * Chunks are recycled. Touching fresh memory costs a page fault per 4 KiB, which measured 20 to 40
 * times slower than copying into memory already in use, so a chunk goes back to the process's free
 * chunks (append-memory.ts), for any log to reuse, once nothing refers to it: no append in it is
 * still waiting for its write, the tail cache has let go of it, and it is no longer the chunk being
 * filled. Readers never get views of a chunk (the tail cache copies out), so nothing outside
 * storage can see a chunk being reused.
 *
 * A log's first chunk is small, and each new one twice the last, up to the full size, while the
 * log fills them quickly (within GROW_WITHIN_MS each); a chunk that took longer to fill is followed
 * by a first-size one again. A broker with 10,000 partitions that each receive a little would
 * otherwise hold 10 GB of mostly empty 1 MiB chunks, whether from the start or after running
 * long enough for every partition to fill a few, and V8 counts them as external memory and
 * answers with back-to-back full collections.
 */
import type { AppendMemory } from "./append-memory.js";

/** The first chunk of a log, or of one that went quiet and gave its chunks back. */
export const FIRST_CHUNK_BYTES = 16 * 1024;
/** A chunk filled within this long of becoming current is followed by one twice its size. */
export const GROW_WITHIN_MS = 1000;

export class Chunk {
  readonly buf: Buffer;
  /** Bytes copied in so far. */
  used = 0;
  /** Appends in this chunk whose write has not completed or failed yet. */
  outstanding = 0;
  /** Tail cache runs pointing into this chunk. */
  cachedRuns = 0;
  /** Still the chunk appends are copied into. */
  current = true;
  /** Filled by the spills of deferred records (spill-chunks.ts) since it last became current. */
  spills = false;

  constructor(bytes: number) {
    this.buf = Buffer.allocUnsafeSlow(bytes);
  }
}

export interface AppendBufferOptions {
  readonly now?: () => number;
  readonly spills?: boolean;
}

export class AppendBuffer {
  readonly #chunkBytes: number;
  /** The first chunk's size, and the size again after a slow fill or a quiet spell. */
  readonly #firstBytes: number;
  readonly #memory: AppendMemory;
  readonly #now: () => number;
  readonly #spills: boolean;
  /** The chunk being filled; none until the first append, so an idle log holds no chunk memory. */
  #current: Chunk | null = null;
  /** When the current chunk became current. */
  #currentSince = 0;
  /** The size of the next chunk: doubles from FIRST_CHUNK_BYTES to the full size while chunks fill quickly. */
  #growTo: number;
  #appendsSinceTrim = false;
  /** After `copyIn`: the chunk the bytes went to and where they start in it. */
  chunk!: Chunk;
  start = 0;

  /**
   * Chunks come from and go back to `memory`; `now` is the clock for their growth (tests set it);
   * `spills` marks the chunks it fills as the spills' (Chunk.spills).
   */
  constructor(chunkBytes: number, memory: AppendMemory, options: AppendBufferOptions = {}) {
    this.#chunkBytes = chunkBytes;
    this.#memory = memory;
    this.#now = options.now ?? performance.now.bind(performance);
    this.#spills = options.spills === true;
    this.#firstBytes = Math.min(FIRST_CHUNK_BYTES, chunkBytes);
    this.#growTo = this.#firstBytes;
  }

  /** Copies `src` into the current chunk, or the next one when it does not fit; see `chunk`/`start`. */
  copyIn(src: Uint8Array): void {
    this.reserve(src.length);
    this.chunk.buf.set(src, this.start);
  }

  /**
   * Takes `n` bytes of the current chunk, or of the next one when they do not fit, for the caller
   * to fill at once (`chunk`, `start`), as `copyIn` fills them with a copy.
   */
  reserve(n: number): void {
    let chunk = this.#current;
    if (chunk === null || chunk.used + n > chunk.buf.length) {
      const now = this.#now();
      if (chunk !== null) {
        chunk.current = false;
        this.release(chunk);
        // Filled quickly: a busy log, whose writes gain from larger chunks. Else a small one again.
        this.#growTo =
          now - this.#currentSince < GROW_WITHIN_MS
            ? Math.min(this.#growTo * 2, this.#chunkBytes)
            : this.#firstBytes;
      }
      chunk = n > this.#chunkBytes ? new Chunk(n) : this.#newChunk(Math.max(n, this.#growTo));
      chunk.current = true;
      chunk.spills = this.#spills;
      chunk.used = 0;
      this.#current = chunk;
      this.#currentSince = now;
    }
    chunk.outstanding++;
    this.#appendsSinceTrim = true;
    this.chunk = chunk;
    this.start = chunk.used;
    chunk.used += n;
  }

  /**
   * Gives memory back after a quiet spell: the chunk being filled, when nothing refers to it.
   * Returns whether any append came since the previous call (then nothing is given back), so the
   * caller can tell an idle log from a busy one.
   */
  trimIdle(): boolean {
    const busy = this.#appendsSinceTrim;
    this.#appendsSinceTrim = false;
    if (busy) return true;
    this.#growTo = this.#firstBytes;
    const chunk = this.#current;
    if (chunk !== null && chunk.outstanding === 0 && chunk.cachedRuns === 0) {
      chunk.current = false;
      this.#current = null;
      this.#memory.give(chunk);
    }
    return false;
  }

  /** The log closed, its writes done: the chunk being filled goes back, if nothing refers to it. */
  close(): void {
    const chunk = this.#current;
    if (chunk === null) return;
    this.#current = null;
    chunk.current = false;
    this.release(chunk);
  }

  /** A free chunk of `bytes` from the process's, or a new one. */
  #newChunk(bytes: number): Chunk {
    return this.#memory.take(bytes) ?? new Chunk(bytes);
  }

  /** Gives `chunk` back to the process's free chunks if nothing refers to it any more. */
  release(chunk: Chunk): void {
    if (chunk.current || chunk.outstanding > 0 || chunk.cachedRuns > 0) return;
    if (chunk.buf.length <= this.#chunkBytes) this.#memory.give(chunk);
  }
}

/**
 * Where appended batches are copied before they are written: chunks filled one after another, so
 * that a coalesced write is a few large buffers, the written bytes can serve hot reads from memory
 * (tail-cache.ts), and the caller's buffer is neither kept nor modified.
 *
 * Chunks are recycled. Touching fresh memory costs a page fault per 4 KiB, which measured 20 to 40
 * times slower than copying into memory already in use, so a chunk returns to a free list once
 * nothing refers to it: no append in it is still waiting for its write, the tail cache has let go
 * of it, and it is no longer the chunk being filled. Readers never get views of a chunk (the tail
 * cache copies out), so nothing outside storage can see a chunk being reused.
 *
 * A log's first chunk is small and each new one twice the last, up to the full size: a broker with
 * 10,000 partitions that each see a few KiB would otherwise hold 10 GB of mostly untouched 1 MiB
 * chunks, which V8 counts as external memory and answers with back-to-back full collections.
 */
/** The first chunk of a log, or of one that went quiet and gave its chunks back. */
export const FIRST_CHUNK_BYTES = 16 * 1024;

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

  constructor(bytes: number) {
    this.buf = Buffer.allocUnsafeSlow(bytes);
  }
}

export class AppendBuffer {
  readonly #chunkBytes: number;
  readonly #maxFree: number;
  #free: Chunk[] = [];
  /** The chunk being filled; none until the first append, so an idle log holds no chunk memory. */
  #current: Chunk | null = null;
  /** The size of the next chunk made new: doubles from FIRST_CHUNK_BYTES to the full size. */
  #growTo: number;
  #appendsSinceTrim = false;
  /** After `copyIn`: the chunk the bytes went to and where they start in it. */
  chunk!: Chunk;
  start = 0;

  /** `maxFreeChunks` bounds the memory kept for reuse. */
  constructor(chunkBytes: number, maxFreeChunks: number) {
    this.#chunkBytes = chunkBytes;
    this.#maxFree = maxFreeChunks;
    this.#growTo = Math.min(FIRST_CHUNK_BYTES, chunkBytes);
  }

  /** Copies `src` into the current chunk, or the next one when it does not fit; see `chunk`/`start`. */
  copyIn(src: Uint8Array): void {
    const n = src.length;
    let chunk = this.#current;
    if (chunk === null || chunk.used + n > chunk.buf.length) {
      if (chunk !== null) {
        chunk.current = false;
        this.release(chunk);
      }
      chunk = n > this.#chunkBytes ? new Chunk(n) : (this.#free.pop() ?? this.#newChunk(n));
      chunk.current = true;
      chunk.used = 0;
      this.#current = chunk;
    }
    chunk.buf.set(src, chunk.used);
    chunk.outstanding++;
    this.#appendsSinceTrim = true;
    this.chunk = chunk;
    this.start = chunk.used;
    chunk.used += n;
  }

  /**
   * Gives memory back after a quiet spell: drops the free chunks, and the chunk being filled when
   * nothing refers to it. Returns whether any append came since the previous call (then nothing is
   * dropped), so the caller can tell an idle log from a busy one.
   */
  trimIdle(): boolean {
    const busy = this.#appendsSinceTrim;
    this.#appendsSinceTrim = false;
    if (busy) return true;
    this.#free = [];
    this.#growTo = Math.min(FIRST_CHUNK_BYTES, this.#chunkBytes);
    const chunk = this.#current;
    if (chunk !== null && chunk.outstanding === 0 && chunk.cachedRuns === 0) {
      chunk.current = false;
      this.#current = null;
    }
    return false;
  }

  /** A chunk of the next size in the doubling, or bigger if `n` needs it (never past the full size). */
  #newChunk(n: number): Chunk {
    const bytes = Math.max(n, this.#growTo);
    this.#growTo = Math.min(this.#growTo * 2, this.#chunkBytes);
    return new Chunk(bytes);
  }

  /** Puts `chunk` on the free list if nothing refers to it any more. */
  release(chunk: Chunk): void {
    if (chunk.current || chunk.outstanding > 0 || chunk.cachedRuns > 0) return;
    if (chunk.buf.length === this.#chunkBytes && this.#free.length < this.#maxFree) {
      chunk.used = 0;
      this.#free.push(chunk);
    }
  }
}

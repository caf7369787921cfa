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
 */
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
  #appendsSinceTrim = false;
  /** After `copyIn`: the chunk the bytes went to and where they start in it. */
  chunk!: Chunk;
  start = 0;

  /** `maxFreeChunks` bounds the memory kept for reuse. */
  constructor(chunkBytes: number, maxFreeChunks: number) {
    this.#chunkBytes = chunkBytes;
    this.#maxFree = maxFreeChunks;
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
      chunk = n > this.#chunkBytes ? new Chunk(n) : (this.#free.pop() ?? new Chunk(this.#chunkBytes));
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
    const chunk = this.#current;
    if (chunk !== null && chunk.outstanding === 0 && chunk.cachedRuns === 0) {
      chunk.current = false;
      this.#current = null;
    }
    return false;
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

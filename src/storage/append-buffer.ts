/**
 * Where appended batches are copied before they are written: large chunks filled one after
 * another, so that a coalesced write is a few large buffers, the written bytes can serve hot
 * reads from memory (tail-cache.ts), and the caller's buffer is neither kept nor modified.
 * Chunks are never reused: a reader may still hold a view of one.
 */
export class AppendBuffer {
  readonly #chunkBytes: number;
  #chunk: Buffer;
  #used = 0;
  /** After `copyIn`: the chunk the bytes went to and where they start in it. */
  chunk: Buffer;
  start = 0;

  constructor(chunkBytes: number) {
    this.#chunkBytes = chunkBytes;
    this.#chunk = Buffer.allocUnsafeSlow(chunkBytes);
    this.chunk = this.#chunk;
  }

  /** Copies `src` into the current chunk, or a new one when it does not fit; see `chunk`/`start`. */
  copyIn(src: Uint8Array): void {
    const n = src.length;
    if (this.#used + n > this.#chunk.length) {
      this.#chunk = Buffer.allocUnsafeSlow(Math.max(this.#chunkBytes, n));
      this.#used = 0;
    }
    this.#chunk.set(src, this.#used);
    this.chunk = this.#chunk;
    this.start = this.#used;
    this.#used += n;
  }
}

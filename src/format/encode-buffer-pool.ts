/**
 * Reusable buffers for encoding batches, sized by what is encoded (RocketMQ's adaptive encode
 * buffer). Every buffer handed out has the pool's current capacity. The capacity starts small,
 * grows at once to fit a batch that needs more, and shrinks only when it has been much larger
 * than recent batches for a while: capacity over `shrinkAboveBytes`, at least `shrinkRatio` times
 * the moving average of batch sizes, and `shrinkIntervalMs` since the last shrink; it then
 * becomes max(initial, 1.5 x average). So a producer that sends big batches keeps big buffers,
 * and one whose burst ended gives the memory back without thrashing between sizes.
 *
 * Reusing a buffer avoids both the allocation and the first touch of fresh memory, which costs a
 * page fault per 4 KiB (docs/performance/storage.md). A buffer goes back with `release` once nothing
 * refers to it any more; one of an older capacity is simply dropped.
 */

export interface EncodeBufferPoolOptions {
  /** First capacity, and the smallest it shrinks to. Default 8 KiB. */
  initialBytes?: number;
  /** The capacity never grows past this (a batch larger than it gets a buffer of its own size). */
  maxBytes?: number;
  /** Weight of each new batch size in the moving average. Default 0.05. */
  alpha?: number;
  /** Shrinking is considered only above this capacity. Default 64 KiB. */
  shrinkAboveBytes?: number;
  /** ...and only when the capacity is at least this many times the average. Default 3. */
  shrinkRatio?: number;
  /** ...and this long after the last shrink. Default 30 s. */
  shrinkIntervalMs?: number;
  /** Free buffers kept for reuse. Default 16. */
  maxFree?: number;
  /**
   * More free buffers are kept while they hold at most this many bytes in all (default 0: only
   * `maxFree`). A producer writing to many partitions at once has as many batches open, each
   * with a buffer: keeping only 16 meant allocating (and first touching) most of them afresh for
   * every send call.
   */
  maxFreeBytes?: number;
  /** Monotonic clock in ms (tests pass their own). */
  now?: () => number;
}

export class EncodeBufferPool {
  readonly #initial: number;
  readonly #max: number;
  readonly #alpha: number;
  readonly #shrinkAbove: number;
  readonly #shrinkRatio: number;
  readonly #shrinkIntervalMs: number;
  readonly #maxFree: number;
  readonly #maxFreeBytes: number;
  readonly #now: () => number;
  #capacity: number;
  #average: number;
  #lastShrink: number;
  #free: ArrayBuffer[] = [];

  constructor(options: EncodeBufferPoolOptions = {}) {
    this.#initial = options.initialBytes ?? 8 * 1024;
    this.#max = Math.max(this.#initial, options.maxBytes ?? 64 * 1024 * 1024);
    this.#alpha = options.alpha ?? 0.05;
    this.#shrinkAbove = options.shrinkAboveBytes ?? 64 * 1024;
    this.#shrinkRatio = options.shrinkRatio ?? 3;
    this.#shrinkIntervalMs = options.shrinkIntervalMs ?? 30_000;
    this.#maxFree = options.maxFree ?? 16;
    this.#maxFreeBytes = options.maxFreeBytes ?? 0;
    this.#now = options.now ?? (() => performance.now());
    this.#capacity = this.#initial;
    this.#average = this.#initial;
    this.#lastShrink = this.#now();
  }

  /** Size of the buffers handed out now. */
  get capacity(): number {
    return this.#capacity;
  }

  /** The moving average of the batch sizes noted so far. */
  get averageBytes(): number {
    return this.#average;
  }

  /** Buffers waiting for reuse. */
  get freeCount(): number {
    return this.#free.length;
  }

  /** A buffer of at least `minBytes`: the current capacity, grown first if that is too small. */
  acquire(minBytes = 0): Buffer {
    if (minBytes > this.#capacity) {
      if (minBytes > this.#max) return Buffer.allocUnsafeSlow(minBytes);
      let grown = this.#capacity;
      while (grown < minBytes) grown *= 2;
      this.#resize(Math.min(grown, this.#max));
    }
    const free = this.#free.pop();
    return free === undefined ? Buffer.allocUnsafeSlow(this.#capacity) : Buffer.from(free);
  }

  /** Takes back a buffer (or any view of one) from `acquire` once nothing refers to it. */
  release(view: Uint8Array): void {
    const ab = view.buffer;
    const cap = this.#capacity;
    if (ab.byteLength !== cap) return;
    const n = this.#free.length;
    if (n >= this.#maxFree && (n + 1) * cap > this.#maxFreeBytes) return;
    if (!(ab instanceof ArrayBuffer)) return;
    this.#free.push(ab);
  }

  /** Records the size of a finished batch: updates the average and shrinks when the rule says so. */
  noteSize(bytes: number): void {
    this.#average += this.#alpha * (bytes - this.#average);
    const cap = this.#capacity;
    if (cap <= this.#shrinkAbove || cap < this.#shrinkRatio * this.#average) return;
    const now = this.#now();
    if (now - this.#lastShrink < this.#shrinkIntervalMs) return;
    this.#lastShrink = now;
    this.#resize(Math.max(this.#initial, Math.ceil(1.5 * this.#average)));
  }

  #resize(capacity: number): void {
    if (capacity === this.#capacity) return;
    this.#capacity = capacity;
    // Buffers of the old size would never be handed out again.
    this.#free = [];
  }
}

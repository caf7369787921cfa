/**
 * Reusable memory for large request frames assembled from several socket reads (a produce request
 * of a few hundred kilobytes), shared by every connection of a broker.
 *
 * - Slots come in power-of-two sizes from `minBytes` to `maxBytes`; a frame takes the smallest slot
 *   that holds it (so it never occupies more than twice its size) and is handed out as an
 *   exact-size view of it. Frames outside that range are allocated as usual.
 * - A frame comes back only through `give`, which its owner calls once nothing refers to it: the
 *   broker does so for requests whose handler copies what it keeps before returning (a produce is
 *   copied into the log's append buffer). Frames never given back are simply collected.
 * - At most `maxFreePerSize` free slots are kept per size; the rest are left to the collector.
 *
 * Why: each buffer this large is an ArrayBuffer with external memory, and V8 starts a
 * young-generation collection for about every 32 MiB of those allocated. At 200 MB/s of produce
 * requests that is six collections a second, whatever else the broker does.
 */

export interface FramePoolOptions {
  /** Smallest slot; smaller frames are allocated as usual. A power of two. */
  minBytes: number;
  /** Largest slot; larger frames are allocated as usual. A power of two. */
  maxBytes: number;
  maxFreePerSize: number;
}

export class FramePool {
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly maxFreePerSize: number;
  /** Free slots by size class (class i holds slots of minBytes << i). */
  #free: ArrayBuffer[][] = [];
  /** Slots this pool made, so a foreign buffer is never taken in. */
  #owned = new WeakSet<ArrayBuffer>();

  constructor(options: FramePoolOptions) {
    const { minBytes, maxBytes, maxFreePerSize } = options;
    if (!isPowerOfTwo(minBytes) || !isPowerOfTwo(maxBytes) || maxBytes < minBytes) {
      throw new RangeError(`slot sizes must be powers of two with min <= max, not ${minBytes}..${maxBytes}`);
    }
    this.minBytes = minBytes;
    this.maxBytes = maxBytes;
    this.maxFreePerSize = maxFreePerSize;
    for (let size = minBytes; size <= maxBytes; size *= 2) this.#free.push([]);
  }

  /** Free slots held, all sizes. */
  get free(): number {
    let n = 0;
    for (const list of this.#free) n += list.length;
    return n;
  }

  /** A buffer of exactly `size` bytes, from a slot when one of the pool's sizes fits. Contents undefined. */
  take(size: number): Buffer {
    if (size < this.minBytes || size > this.maxBytes) return Buffer.allocUnsafe(size);
    const cls = this.#classOf(size);
    let slot = this.#free[cls]!.pop();
    if (slot === undefined) {
      slot = new ArrayBuffer(this.minBytes << cls);
      this.#owned.add(slot);
    }
    return Buffer.from(slot, 0, size);
  }

  /**
   * Gives back a buffer from `take`; the caller promises nothing refers to it any more. Anything
   * else (a frame outside the pool's sizes, a view of a socket chunk) is ignored.
   */
  give(frame: Uint8Array): void {
    const slot = frame.buffer;
    if (!(slot instanceof ArrayBuffer) || frame.byteOffset !== 0 || !this.#owned.has(slot)) return;
    const list = this.#free[this.#classOf(slot.byteLength)]!;
    if (list.length >= this.maxFreePerSize || list.includes(slot)) return;
    list.push(slot);
  }

  /** The smallest class whose slots hold `size` bytes (minBytes <= size <= maxBytes). */
  #classOf(size: number): number {
    let cls = 0;
    while (this.minBytes << cls < size) cls++;
    return cls;
  }
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

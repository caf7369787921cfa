/**
 * The compaction key map: key -> offset of the newest record seen with that key. Keys are not kept,
 * only a fixed-size digest of each (the first 16 bytes of its SHA-256), so the map's memory is
 * fixed when it is made: 24 bytes a slot, in one open-addressing table (linear probing) that is
 * never more than three quarters full. Two keys with the same digest would be taken for one; at
 * 128 bits that takes about 2^64 distinct keys by chance, and SHA-256 makes crafting such a pair
 * impractical, so a producer cannot make compaction drop another key's records on purpose.
 */
import { hash } from "node:crypto";
import { readU32 } from "../../format/u64.js";

export const DIGEST_BYTES = 16;
/** Bytes of memory per slot: the digest and a float64 offset. */
export const SLOT_BYTES = DIGEST_BYTES + 8;
const MIN_SLOTS = 64;
/** Entries allowed per slot, so that probes stay short. */
const MAX_LOAD = 0.75;

/** Writes the digest of buf[start, end) into out[at, at + 16). */
export function keyDigest(buf: Buffer, start: number, end: number, out: Buffer, at: number): void {
  const full = hash("sha256", buf.subarray(start, end), "buffer");
  full.copy(out, at, 0, DIGEST_BYTES);
}

/** The map size for about `keys` distinct keys, capped at `maxKeys` (both at least a few dozen). */
export function slotsFor(keys: number, maxKeys: number): number {
  const want = Math.ceil(Math.min(keys, maxKeys) / MAX_LOAD);
  let slots = MIN_SLOTS;
  while (slots < want) slots *= 2;
  return slots;
}

export class KeyOffsetMap {
  readonly #digests: Buffer;
  /** -1 marks an empty slot. */
  readonly #offsets: Float64Array;
  readonly #mask: number;
  readonly #limit: number;
  #size = 0;

  /** `slots` must be a power of two; at most `maxEntries` digests are taken (fewer if the load demands). */
  constructor(slots: number, maxEntries = Number.POSITIVE_INFINITY) {
    if (slots < 1 || (slots & (slots - 1)) !== 0)
      throw new RangeError(`slots must be a power of two: ${slots}`);
    this.#digests = Buffer.alloc(slots * DIGEST_BYTES);
    this.#offsets = new Float64Array(slots).fill(-1);
    this.#mask = slots - 1;
    this.#limit = Math.min(maxEntries, Math.floor(slots * MAX_LOAD));
  }

  /** Distinct digests held. */
  get size(): number {
    return this.#size;
  }

  get isFull(): boolean {
    return this.#size >= this.#limit;
  }

  /**
   * Records `offset` as the newest for the digest at `d[at]`. Returns false, changing nothing, when
   * the digest is new and the map is full.
   */
  put(d: Buffer, at: number, offset: number): boolean {
    const slot = this.#find(d, at);
    if (this.#offsets[slot]! < 0) {
      if (this.#size >= this.#limit) return false;
      d.copy(this.#digests, slot * DIGEST_BYTES, at, at + DIGEST_BYTES);
      this.#size++;
    }
    this.#offsets[slot] = offset;
    return true;
  }

  /** The offset recorded for the digest at `d[at]`, or -1. */
  get(d: Buffer, at: number): number {
    return this.#offsets[this.#find(d, at)]!;
  }

  /** The slot holding the digest, or the empty slot where it would go. */
  #find(d: Buffer, at: number): number {
    const digests = this.#digests;
    const offsets = this.#offsets;
    let slot = readU32(d, at) & this.#mask;
    for (;;) {
      if (offsets[slot]! < 0) return slot;
      const p = slot * DIGEST_BYTES;
      if (digests.compare(d, at, at + DIGEST_BYTES, p, p + DIGEST_BYTES) === 0) return slot;
      slot = (slot + 1) & this.#mask;
    }
  }
}

/**
 * Which partition a message goes to.
 *
 * - With a key: `(murmur2(keyBytes) & 0x7fffffff) % partitions`, the same hash and the same
 *   positive-modulo step as Kafka's default partitioner (seed 0x9747b28c, UTF-8 bytes for string
 *   keys), so a key lands on the partition a Kafka client would pick for the same partition count.
 * - Without a key: round-robin per batch ("sticky"): messages stay on one partition until the batch
 *   being filled there is sealed, then move to the next partition. This gives big batches at low
 *   rates and still spreads load evenly.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 over `data[0, length)`, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array, length: number = data.length): number {
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The 1-3 tail bytes fold in last byte first, as in the reference implementation.
  const tail = length & 3;
  if (tail === 3) h ^= data[whole + 2]! << 16;
  if (tail >= 2) h ^= data[whole + 1]! << 8;
  if (tail >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** A string key is hashed through this scratch buffer, so hashing allocates nothing. */
let scratch = Buffer.allocUnsafe(256);

/** The partition of `key` among `partitions`. */
export function partitionForKey(key: Uint8Array | string, partitions: number): number {
  let hash: number;
  if (typeof key === "string") {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (key.length * 3 > scratch.length)
      scratch = Buffer.allocUnsafe(Math.max(key.length * 3, scratch.length * 2));
    hash = murmur2(scratch, scratch.write(key, 0));
  } else {
    hash = murmur2(key);
  }
  return (hash & 0x7fffffff) % partitions;
}

/** Whether the batch a keyless message was last put into is still open. */
export interface StickyTarget {
  readonly sealed: boolean;
}

/**
 * Round-robin per batch for keyless messages of one topic. The producer reports where it put each
 * keyless message (`stick`), and `next` moves on once that batch has been sealed.
 */
export class StickyPartitioner {
  #partition: number;
  #target: StickyTarget | null = null;

  constructor(start: number = Math.floor(Math.random() * 0x7fffffff)) {
    this.#partition = start;
  }

  /** The partition for the next keyless message. */
  next(partitions: number): number {
    if (this.#target?.sealed === true) {
      this.#partition++;
      this.#target = null;
    }
    if (this.#partition >= partitions) this.#partition %= partitions;
    return this.#partition;
  }

  /** Moves to the next partition now (the current one's batch is full). */
  advance(): void {
    this.#partition++;
    this.#target = null;
  }

  /** Records the batch the last keyless message went into. */
  stick(target: StickyTarget): void {
    this.#target = target;
  }
}

/**
 * What a partition remembers of one idempotent producer: its epoch, the last sequence number it
 * stored, when it last appended, and its last few batches (first and last sequence, first and last
 * offset), so that a retry of any of them is answered with the offsets it was stored at. The
 * batches live in one typed array used as a ring: recording a batch allocates nothing.
 */

/** Batches remembered per producer: Kafka's max.in.flight.requests.per.connection with idempotence. */
export const REMEMBERED_BATCHES = 5;
const FIELDS = 4;

export class ProducerEntry {
  epoch: number;
  /** The last sequence number stored; meaningful when batchCount > 0. */
  lastSequence = -1;
  /** Wall-clock ms of its last append (or of the replay that found it in the log). */
  lastUsedMs: number;
  /** (first sequence, last sequence, base offset, last offset) per batch, oldest to newest from `oldest`. */
  readonly #batches = new Float64Array(REMEMBERED_BATCHES * FIELDS);
  #oldest = 0;
  #count = 0;

  constructor(epoch: number, nowMs: number) {
    this.epoch = epoch;
    this.lastUsedMs = nowMs;
  }

  get batchCount(): number {
    return this.#count;
  }

  /** A new epoch: the batches of the old one are forgotten. */
  reset(epoch: number): void {
    this.epoch = epoch;
    this.lastSequence = -1;
    this.#oldest = 0;
    this.#count = 0;
  }

  add(firstSequence: number, lastSequence: number, baseOffset: number, lastOffset: number): void {
    let slot: number;
    if (this.#count < REMEMBERED_BATCHES) slot = (this.#oldest + this.#count++) % REMEMBERED_BATCHES;
    else {
      slot = this.#oldest;
      this.#oldest = (this.#oldest + 1) % REMEMBERED_BATCHES;
    }
    const b = this.#batches;
    const at = slot * FIELDS;
    b[at] = firstSequence;
    b[at + 1] = lastSequence;
    b[at + 2] = baseOffset;
    b[at + 3] = lastOffset;
    this.lastSequence = lastSequence;
  }

  /** The index (0 = oldest) of the remembered batch with exactly these sequences, or -1. */
  find(firstSequence: number, lastSequence: number): number {
    const b = this.#batches;
    for (let i = 0; i < this.#count; i++) {
      const at = ((this.#oldest + i) % REMEMBERED_BATCHES) * FIELDS;
      if (b[at] === firstSequence && b[at + 1] === lastSequence) return i;
    }
    return -1;
  }

  /** Field `field` (0-3, as stored) of remembered batch `i` (0 = oldest). */
  field(i: number, field: number): number {
    return this.#batches[((this.#oldest + i) % REMEMBERED_BATCHES) * FIELDS + field]!;
  }

  /**
   * Forgets the batches at or after `endOffset` (they were not stored after all: a failed write,
   * or a crash before they reached the disk). Returns false when none is left.
   */
  truncate(endOffset: number): boolean {
    while (this.#count > 0 && this.field(this.#count - 1, 2) >= endOffset) this.#count--;
    if (this.#count === 0) return false;
    this.lastSequence = this.field(this.#count - 1, 1);
    return true;
  }
}

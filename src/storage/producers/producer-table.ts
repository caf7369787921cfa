/**
 * A partition's idempotent producers (docs/design.md, "Idempotent producers"): by producer id, its
 * epoch and last batches. The log asks `check` about each batch that carries a producer id in the
 * same synchronous step that assigns offsets, so two retries in flight cannot both pass, then
 * `record`s it once its offsets are known. Checks follow Kafka's (KIP-98): an older epoch is
 * fenced, a newer one starts over at sequence 0, a retry of one of the last five batches is a
 * duplicate answered with its original offsets, anything else must follow the last sequence.
 *
 * Memory is bounded: when a new producer would pass `maxProducers`, those idle past the expiration
 * are forgotten, and if that is not enough, the longest idle one (its next batch, unless it starts
 * a new epoch at 0, is then UNKNOWN_PRODUCER_ID, as after Kafka's expiration). The scan for them
 * runs only then and at snapshots, so an append of a known producer costs one map lookup.
 */

import { batchCount } from "../../format/batch-header.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import {
  batchBaseSequence,
  batchProducerEpoch,
  batchProducerId,
  sequenceAfter,
} from "../../format/producer-fields.js";
import { ProducerEntry } from "./producer-entry.js";

export interface ProducerLimits {
  /** Producers idle this long are forgotten. */
  expirationMs: number;
  /** Producers kept at most; past it the longest idle is forgotten. */
  maxProducers: number;
}

/** `check`'s answers. */
export const ProducerCheck = {
  /** Store the batch. */
  APPEND: 0,
  /** Store nothing: the batch is stored already, at `duplicateBaseOffset`..`duplicateLastOffset`. */
  DUPLICATE: 1,
} as const;

export class ProducerTable {
  readonly #entries = new Map<number, ProducerEntry>();
  #limits: ProducerLimits;
  /** Set by a `check` that answered DUPLICATE. */
  duplicateBaseOffset = 0;
  duplicateLastOffset = 0;

  constructor(limits: ProducerLimits) {
    this.#limits = limits;
  }

  set limits(limits: ProducerLimits) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(producerId: number): ProducerEntry | undefined {
    return this.#entries.get(producerId);
  }

  entries(): IterableIterator<[number, ProducerEntry]> {
    return this.#entries.entries();
  }

  /**
   * Whether the batch at `at` (which carries a producer id) may be stored: APPEND or DUPLICATE,
   * else a ConchError. Changes nothing.
   */
  check(buf: Uint8Array, at: number): number {
    const id = batchProducerId(buf, at);
    const epoch = batchProducerEpoch(buf, at);
    const first = batchBaseSequence(buf, at);
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      if (first !== 0) {
        throw new ConchError(
          ErrorCode.UNKNOWN_PRODUCER_ID,
          `producer ${id} has no state on this partition and its batch starts at sequence ${first}, not 0`,
        );
      }
      return ProducerCheck.APPEND;
    }
    if (epoch < entry.epoch) throw fenced(id, epoch, entry.epoch);
    if (epoch > entry.epoch) {
      if (first !== 0) throw newEpochNotAtZero(id, epoch, first);
      return ProducerCheck.APPEND;
    }
    const last = sequenceAfter(first, batchCount(buf, at) - 1);
    const i = entry.find(first, last);
    if (i >= 0) {
      this.duplicateBaseOffset = entry.field(i, 2);
      this.duplicateLastOffset = entry.field(i, 3);
      return ProducerCheck.DUPLICATE;
    }
    const expected = sequenceAfter(entry.lastSequence, 1);
    if (first !== expected) {
      throw new ConchError(
        ErrorCode.OUT_OF_ORDER_SEQUENCE,
        `producer ${id} epoch ${epoch}: batch starts at sequence ${first}, expected ${expected}`,
      );
    }
    return ProducerCheck.APPEND;
  }

  /** Remembers the batch at `at`, stored from `baseOffset` (checked, or read back from the log). */
  record(buf: Uint8Array, at: number, baseOffset: number, nowMs: number): void {
    const id = batchProducerId(buf, at);
    const epoch = batchProducerEpoch(buf, at);
    const count = batchCount(buf, at);
    const first = batchBaseSequence(buf, at);
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#makeRoom(nowMs);
      entry = new ProducerEntry(epoch, nowMs);
      this.#entries.set(id, entry);
    } else {
      if (epoch !== entry.epoch) entry.reset(epoch);
      entry.lastUsedMs = nowMs;
    }
    entry.add(first, sequenceAfter(first, count - 1), baseOffset, baseOffset + count - 1);
  }

  /** Adds a producer read from a snapshot. */
  restore(id: number, entry: ProducerEntry): void {
    this.#entries.set(id, entry);
  }

  /** Forgets every batch at or after `endOffset`, and producers left with none. */
  truncate(endOffset: number): void {
    for (const [id, entry] of this.#entries) if (!entry.truncate(endOffset)) this.#entries.delete(id);
  }

  /** Forgets the producers idle for the expiration or longer. */
  expire(nowMs: number): void {
    const cutoff = nowMs - this.#limits.expirationMs;
    for (const [id, entry] of this.#entries) if (entry.lastUsedMs <= cutoff) this.#entries.delete(id);
  }

  #makeRoom(nowMs: number): void {
    if (this.#entries.size < this.#limits.maxProducers) return;
    this.expire(nowMs);
    while (this.#entries.size >= this.#limits.maxProducers) {
      let oldestId = -1;
      let oldest = Number.POSITIVE_INFINITY;
      for (const [id, entry] of this.#entries) {
        if (entry.lastUsedMs < oldest) {
          oldest = entry.lastUsedMs;
          oldestId = id;
        }
      }
      this.#entries.delete(oldestId);
    }
  }
}

function fenced(id: number, epoch: number, current: number): ConchError {
  return new ConchError(
    ErrorCode.INVALID_PRODUCER_EPOCH,
    `producer ${id} epoch ${epoch} is fenced: this partition has seen epoch ${current}`,
  );
}

function newEpochNotAtZero(id: number, epoch: number, first: number): ConchError {
  return new ConchError(
    ErrorCode.OUT_OF_ORDER_SEQUENCE,
    `producer ${id} epoch ${epoch} is new on this partition but its batch starts at sequence ${first}, not 0`,
  );
}

/**
 * The stored Kafka batches of one append whose header's max_timestamp is not their largest record
 * timestamp (rule K6's second half, docs/format.md), noted by `validateBatches` during its one walk
 * of the records and set right in the log's copy of the append (`setKafkaMaxTimestamp`), as Kafka's
 * broker sets them. Noting them there rather than refusing the append makes the repair part of the
 * append itself, wherever and whenever it runs (a topic being auto-created, a partition not open
 * yet). One instance is reused for every append: no object per batch, and a right batch costs
 * nothing more than the comparison the walk already makes.
 */
import { setKafkaMaxTimestamp } from "./kafka-envelope.js";

export class MaxTimestampRepairs {
  /** Where each batch to set right starts, relative to the start of the validated buffer. */
  readonly #at: number[] = [];
  /** Its largest record timestamp, ms. */
  readonly #maxTimestampMs: number[] = [];
  #count = 0;

  get count(): number {
    return this.#count;
  }

  clear(): void {
    this.#count = 0;
  }

  add(at: number, maxTimestampMs: number): void {
    this.#at[this.#count] = at;
    this.#maxTimestampMs[this.#count] = maxTimestampMs;
    this.#count++;
  }

  /** Sets each noted batch right in a copy of the validated buffer that starts at buf[start]. */
  applyTo(buf: Uint8Array, start: number): void {
    for (let i = 0; i < this.#count; i++) {
      setKafkaMaxTimestamp(buf, start + this.#at[i]!, this.#maxTimestampMs[i]!);
    }
  }
}

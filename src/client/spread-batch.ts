/**
 * A `sendBatch` call's records for one leader, sent as one partitioned batch in a Produce version
 * 3 request (protocol/produce-v3.ts) instead of a batch per partition: what a keyed send spread
 * thin over many partitions costs one batch, one CRC and one object here, not one of each per
 * partition. The producer decides when a call goes this way (producer.ts, `#sendSpread`).
 *
 * Record j of the batch is message `indices[j]` of the call, for partition `partitions[j]`, and the
 * `ranks[j]`-th record of that partition in the batch: the broker gives a partition's records
 * consecutive offsets in batch order, so its offset is the partition's base offset + `ranks[j]`.
 */
import type { ProducerMessage } from "./producer.js";
import type { SendGroup } from "./producer-batch.js";

export class SpreadBatch {
  readonly topic: string;
  /** The partitioned batch. */
  readonly records: Buffer;
  readonly group: SendGroup;
  /** The call's messages, kept for a partition that must be sent again the ordinary way. */
  readonly messages: readonly ProducerMessage[];
  /** The timestamp the call gave messages without one. */
  readonly now: number;
  readonly indices: Uint32Array;
  readonly partitions: Uint32Array;
  readonly ranks: Uint32Array;
  /** Bytes counted against the producer's buffer memory until settled. */
  readonly bytes: number;
  settled = false;
  #whenSettled: Promise<void> | null = null;
  #onSettled: (() => void) | null = null;

  constructor(
    topic: string,
    records: Buffer,
    group: SendGroup,
    messages: readonly ProducerMessage[],
    now: number,
    indices: Uint32Array,
    partitions: Uint32Array,
    ranks: Uint32Array,
    bytes: number,
  ) {
    this.topic = topic;
    this.records = records;
    this.group = group;
    this.messages = messages;
    this.now = now;
    this.indices = indices;
    this.partitions = partitions;
    this.ranks = ranks;
    this.bytes = bytes;
  }

  /** Resolves once the batch is settled (made only when someone waits: flush). */
  whenSettled(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.#whenSettled ??= new Promise<void>((resolve) => {
      this.#onSettled = resolve;
    });
    return this.#whenSettled;
  }

  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.#onSettled?.();
  }
}

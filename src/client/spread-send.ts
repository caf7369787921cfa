/**
 * Whether a `sendBatch` call goes as spread batches (spread-batch.ts), and building them.
 *
 * A call goes this way when its records touch many partitions with few records each, as keyed
 * messages over a topic of thousands of partitions do: at least SPREAD_MIN_MESSAGES messages, every
 * one with a key or a partition, over at least SPREAD_MIN_PARTITIONS partitions with at most
 * SPREAD_MAX_PER_PARTITION records each on average, each partition's leader on a connection that
 * agreed to protocol version 3. The producer adds its own conditions (producer.ts, `#sendSpread`):
 * not idempotent, no compression, nothing of the topic waiting in the accumulator. Anything else
 * returns null, and the call takes the ordinary path, which also reports any invalid message.
 */
import { BatchBuilder } from "../format/batch-builder.js";
import { BATCH_RECORDS_AT, HEADER_SIZE, MAX_TIMESTAMP_MS } from "../format/layout.js";
import { headersBlockSize } from "../format/record-headers.js";
import { PARTITIONED_PRODUCE_PROTOCOL_VERSION } from "../protocol/api.js";
import { byteLength } from "./byte-length.js";
import type { ConnectionManager } from "./connection-manager.js";
import { partitionForKey } from "./partitioner.js";
import type { ProducerMessage } from "./producer.js";
import type { SendGroup } from "./producer-batch.js";
import { SpreadBatch } from "./spread-batch.js";

export const SPREAD_MIN_MESSAGES = 64;
export const SPREAD_MIN_PARTITIONS = 16;
export const SPREAD_MAX_PER_PARTITION = 4;

/** Where a partition's leader is, as the producer's broker pool says. */
export type LeaderOf = (topic: string, partition: number) => ConnectionManager;

export class SpreadBuilder {
  /** Batches are carved one after another from this builder's slabs, never copied. */
  #builder = new BatchBuilder({ partitioned: true });
  /** Records so far per partition in the call being looked at; zeroed again after each call. */
  #counts = new Uint32Array(0);
  #touched: number[] = [];

  /**
   * The call's spread batches with their leaders, or null for the ordinary path. `maxBytes`: the
   * largest partitioned batch to build (the broker's batch limit).
   */
  build(
    topic: string,
    messages: readonly ProducerMessage[],
    group: SendGroup,
    now: number,
    partitionCount: number,
    maxBytes: number,
    leaderOf: LeaderOf,
  ): Array<[ConnectionManager, SpreadBatch]> | null {
    const count = messages.length;
    if (count < SPREAD_MIN_MESSAGES || partitionCount < SPREAD_MIN_PARTITIONS) return null;
    if (this.#counts.length < partitionCount) this.#counts = new Uint32Array(partitionCount);
    const partitions = new Uint32Array(count);
    const ranks = new Uint32Array(count);
    try {
      const bytes = this.#place(messages, now, partitionCount, partitions, ranks);
      const spread = this.#touched.length;
      if (
        bytes < 0 ||
        bytes > maxBytes ||
        spread < SPREAD_MIN_PARTITIONS ||
        count > SPREAD_MAX_PER_PARTITION * spread
      )
        return null;
      return this.#encode(topic, messages, group, now, partitions, ranks, leaderOf);
    } finally {
      for (const p of this.#touched) this.#counts[p] = 0;
      this.#touched.length = 0;
    }
  }

  /**
   * Each message's partition and its rank among the call's records for that partition; returns
   * the partitioned batch's size, or -1 when a message does not qualify or is invalid.
   */
  #place(
    messages: readonly ProducerMessage[],
    now: number,
    n: number,
    partitions: Uint32Array,
    ranks: Uint32Array,
  ): number {
    const counts = this.#counts;
    let bytes = BATCH_RECORDS_AT;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      const key = m.key ?? null;
      const keyBytes = key === null ? 0 : byteLength(key);
      const valueBytes = m.value === null ? 0 : byteLength(m.value);
      const headers = m.headers ?? null;
      const headersBytes = headers === null ? 0 : headersBlockSize(headers);
      const ts = m.timestamp ?? now;
      if (keyBytes < 0 || valueBytes < 0 || headersBytes < 0) return -1;
      if (!Number.isInteger(ts) || ts < 0 || ts > MAX_TIMESTAMP_MS) return -1;
      let partition = m.partition;
      if (partition === undefined) {
        if (key === null) return -1;
        partition = partitionForKey(key, n);
      } else if (!Number.isInteger(partition) || partition < 0 || partition >= n) {
        return -1;
      }
      partitions[i] = partition;
      const rank = counts[partition]!;
      if (rank === 0) this.#touched.push(partition);
      ranks[i] = rank;
      counts[partition] = rank + 1;
      // The extended layout adds 4 bytes per headers block it writes; counted with the block.
      bytes += HEADER_SIZE + keyBytes + valueBytes + headersBytes;
    }
    return bytes;
  }

  #encode(
    topic: string,
    messages: readonly ProducerMessage[],
    group: SendGroup,
    now: number,
    partitions: Uint32Array,
    ranks: Uint32Array,
    leaderOf: LeaderOf,
  ): Array<[ConnectionManager, SpreadBatch]> | null {
    // The call's indices by leader, in call order; one leader on a single node.
    const byLeader = new Map<ConnectionManager, number[]>();
    for (let i = 0; i < messages.length; i++) {
      const leader = leaderOf(topic, partitions[i]!);
      let list = byLeader.get(leader);
      if (list === undefined) {
        const conn = leader.current;
        if (conn === null || conn.version < PARTITIONED_PRODUCE_PROTOCOL_VERSION) return null;
        byLeader.set(leader, (list = []));
      }
      list.push(i);
    }
    const out: Array<[ConnectionManager, SpreadBatch]> = [];
    const b = this.#builder;
    for (const [leader, list] of byLeader) {
      const k = list.length;
      const indices = Uint32Array.from(list);
      const parts = new Uint32Array(k);
      const rks = new Uint32Array(k);
      for (let j = 0; j < k; j++) {
        const i = list[j]!;
        const m = messages[i]!;
        parts[j] = partitions[i]!;
        rks[j] = ranks[i]!;
        b.addTo(partitions[i]!, m.value, m.key ?? null, m.timestamp ?? now, m.headers ?? null);
      }
      const records = b.finish();
      out.push([
        leader,
        new SpreadBatch(topic, records, group, messages, now, indices, parts, rks, records.length),
      ]);
    }
    return out;
  }
}

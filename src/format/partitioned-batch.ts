/**
 * A partitioned batch (attribute bit 5, docs/format.md) split into one ordinary batch per
 * partition: what the broker does with Produce version 3, whose one batch holds the records of a
 * send spread over many partitions. The producer checksums and the broker checks one batch per
 * request instead of one per partition; each partition's log then takes an ordinary batch of its
 * records, as from any other produce.
 *
 * Each output batch holds its partition's records in the order they came, with offset deltas
 * 0..n-1, the largest of their timestamps, no producer fields, the extended layout when the input
 * had it (its records keep their layout byte for byte) and a CRC of its own. All of them are views
 * of one buffer.
 */
import { PartitionIndex } from "./partition-index.js";
import { framedBytes, frameRuns, type RecordRuns } from "./record-framer.js";

/** One partition's share of a partitioned batch. */
export interface PartitionBatch {
  readonly partition: number;
  /** An ordinary batch (base offset 0) of the partition's records. */
  readonly records: Buffer;
}

/**
 * Splits the partitioned batch at `buf[at..]`, which `checkPartitionedBatch` has found
 * whole and valid (this function relies on its framing and checks nothing): one entry per
 * partition, in the order each first appears in the batch.
 */
export function splitPartitionedBatch(buf: Buffer, at: number): PartitionBatch[] {
  const index = new PartitionIndex(buf, at);
  const groups = index.groups;
  // Run g is the index's group g.
  const runs: RecordRuns = {
    indexes: new Array<PartitionIndex>(groups).fill(index),
    groups: Array.from({ length: groups }, (_, g) => g),
  };
  let total = 0;
  for (let g = 0; g < groups; g++) total += framedBytes(runs, g, g + 1);
  const out = Buffer.allocUnsafe(total);
  const split = new Array<PartitionBatch>(groups);
  for (let g = 0, s = 0; g < groups; g++) {
    const end = frameRuns(runs, g, g + 1, out, s);
    split[g] = { partition: index.partitions[g]!, records: out.subarray(s, end) };
    s = end;
  }
  return split;
}

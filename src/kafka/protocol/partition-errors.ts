/**
 * A list of topics, each with a list of partitions and an error code per partition: the result of
 * OffsetCommit (every version here) and the like.
 *
 *   topics [name string | partitions [partition_index int32 | error_code int16]]
 */
import type { KafkaSink } from "./kafka-writer.js";

export interface PartitionErrors {
  topics: readonly { name: string; partitions: readonly { partitionIndex: number; errorCode: number }[] }[];
}

export function writePartitionErrors(w: KafkaSink, res: PartitionErrors): void {
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name);
    w.arrayCount(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.partitionIndex);
      w.int16(p.errorCode);
    }
  }
}

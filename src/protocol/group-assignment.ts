/**
 * The `assignment array<(topic string, partitions array<u32>)>` field shared by JoinGroup and
 * DescribeGroup: which partitions of which topics a member owns.
 */
import type { WireReader } from "./wire-reader.js";
import { stringSize, type WireWriter } from "./wire-writer.js";

export interface TopicPartitions {
  topic: string;
  /** Ascending. */
  partitions: number[];
}

/** Smallest wire size of one entry: an empty topic name and no partitions. */
const MIN_ENTRY_BYTES = 2 + 4;

export function assignmentSize(assignment: readonly TopicPartitions[]): number {
  let size = 4;
  for (const t of assignment) size += stringSize(t.topic) + 4 + 4 * t.partitions.length;
  return size;
}

export function writeAssignment(w: WireWriter, assignment: readonly TopicPartitions[]): void {
  w.count(assignment.length);
  for (const t of assignment) {
    w.string(t.topic).count(t.partitions.length);
    for (const p of t.partitions) w.u32(p);
  }
}

export function readAssignment(r: WireReader): TopicPartitions[] {
  const n = r.count(MIN_ENTRY_BYTES);
  const out = new Array<TopicPartitions>(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const count = r.count(4);
    const partitions = new Array<number>(count);
    for (let j = 0; j < count; j++) partitions[j] = r.u32();
    out[i] = { topic, partitions };
  }
  return out;
}

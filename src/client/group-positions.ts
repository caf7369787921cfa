/**
 * What a group member has processed, per partition it owns, and what it last committed: the
 * bookkeeping behind GroupConsumer's commits (docs/groups.md, "At-least-once").
 *
 * The Consumer moves a partition's position past a message when it hands the message out; here
 * the message the application holds does not count until it lets go of it (asks for the next one)
 * or vouches for it (`markProcessed`). Only owned partitions are ever committed, and only when their
 * processed position moved since the last commit.
 */
import type { ConsumerMessage, PartitionPosition, TopicPartition } from "./consumer.js";

export interface ProcessedOffset {
  topic: string;
  partition: number;
  /** The next offset to read: the last processed + 1. */
  offset: number;
}

export class GroupPositions {
  /** "topic:partition" of the partitions owned in the current generation. */
  #owned = new Set<string>();
  /** What the group has committed for them, as far as this member knows. */
  #committed = new Map<string, number>();
  /** The message the application holds: handed out, not yet processed. */
  #held: ConsumerMessage | null = null;
  /** Positions the application vouched for, ahead of what the iterators know. */
  #marks = new Map<string, number>();

  owns(topic: string, partition: number): boolean {
    return this.#owned.has(key(topic, partition));
  }

  /** Owns exactly these partitions now; what concerned the others is forgotten. */
  ownOnly(partitions: readonly TopicPartition[]): void {
    this.#owned = new Set(partitions.map((p) => key(p.topic, p.partition)));
    for (const k of [...this.#committed.keys()]) if (!this.#owned.has(k)) this.#committed.delete(k);
    for (const k of [...this.#marks.keys()]) if (!this.#owned.has(k)) this.#marks.delete(k);
  }

  own(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) this.#owned.add(key(p.topic, p.partition));
  }

  clear(): void {
    this.#owned.clear();
    this.#committed.clear();
    this.#marks.clear();
  }

  hold(m: ConsumerMessage): void {
    this.#held = m;
  }

  release(): void {
    this.#held = null;
  }

  /** Counts a record, and everything before it in its partition, as processed. */
  markProcessed(record: TopicPartition & { offset: number }): void {
    if (record === this.#held) this.#held = null;
    const k = key(record.topic, record.partition);
    if (!this.#owned.has(k)) return;
    this.#marks.set(k, Math.max(this.#marks.get(k) ?? 0, record.offset + 1));
  }

  /**
   * The application moved a partition: what it vouched for there and the message it holds from it
   * no longer say where it is; the Consumer's new position does.
   */
  seeked(topic: string, partition: number): void {
    this.#marks.delete(key(topic, partition));
    const held = this.#held;
    if (held !== null && held.topic === topic && held.partition === partition) this.#held = null;
  }

  /** The group's committed offset of an owned partition is known to be `offset`. */
  committed(topic: string, partition: number, offset: number): void {
    const k = key(topic, partition);
    if (this.#owned.has(k)) this.#committed.set(k, offset);
  }

  /** From the Consumer's positions: the processed position of every owned partition that moved. */
  toCommit(positions: readonly PartitionPosition[]): ProcessedOffset[] {
    const out: ProcessedOffset[] = [];
    const held = this.#held;
    for (const p of positions) {
      const k = key(p.topic, p.partition);
      if (!this.#owned.has(k)) continue;
      let offset = p.offset;
      // The iterator counted the message in hand as read; it is not processed until it moves on.
      if (held !== null && held.topic === p.topic && held.partition === p.partition) {
        offset = Math.min(offset, held.offset);
      }
      offset = Math.max(offset, this.#marks.get(k) ?? 0);
      if (this.#committed.get(k) === offset) continue;
      out.push({ topic: p.topic, partition: p.partition, offset });
    }
    return out;
  }
}

function key(topic: string, partition: number): string {
  // Topic names cannot hold ":", so the key is unambiguous.
  return `${topic}:${partition}`;
}

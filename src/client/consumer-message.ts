/**
 * One record as the message iterators hand it out. Key, value and header values are views of the
 * fetched bytes. Headers are decoded only when the `headers` property is read (then kept), so a
 * consumer that never looks at them pays one object per message, as before.
 */
import type { RecordCursor } from "../format/record-cursor.js";
import { type RecordHeader, readHeaders } from "../format/record-headers.js";

export type { RecordHeader } from "../format/record-headers.js";

export interface ConsumerMessage {
  topic: string;
  partition: number;
  offset: number;
  /** The key; null when the record has none (an empty key is an empty Buffer). */
  key: Buffer | null;
  /** The value; an empty Buffer when it is null, which `valueIsNull` tells apart from an empty one. */
  value: Buffer;
  /** The value is null: with a key, the record is a tombstone. */
  valueIsNull: boolean;
  /** Headers in stored order, repeated keys kept; [] when there are none. */
  readonly headers: RecordHeader[];
  /** Milliseconds since the epoch. */
  timestamp: number;
}

export class FetchedMessage implements ConsumerMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer;
  readonly valueIsNull: boolean;
  readonly timestamp: number;
  /**
   * The headers block's size until `headers` is first read (the block follows the value in the
   * same buffer, so the value's view locates it), then the decoded headers. One field, not a
   * buffer and two positions: measured, each field adds to every message's cost.
   */
  #headers: number | RecordHeader[];

  /** The record `c` is on. */
  constructor(topic: string, partition: number, c: RecordCursor) {
    this.topic = topic;
    this.partition = partition;
    this.offset = c.offset;
    this.key = c.key();
    this.value = c.value();
    this.valueIsNull = c.valueNull;
    this.timestamp = c.timestampMs;
    this.#headers = c.recordEnd - c.valueEnd;
  }

  get headers(): RecordHeader[] {
    if (typeof this.#headers === "number") {
      const v = this.value;
      const block = Buffer.from(v.buffer, v.byteOffset + v.length, this.#headers);
      this.#headers = readHeaders(block, 0, block.length);
    }
    return this.#headers;
  }
}

/**
 * A fetched batch that is not what was stored: its CRC32C does not match its bytes, its header
 * cannot be walked, or the broker met such a batch on its read path (CORRUPT_BATCH on the wire).
 * The partition stops there; the others go on. `offset` is the first offset the consumer could
 * not read past, so `seek(topic, partition, { offset: n })` with a later `n` skips the damage.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export class CorruptBatchError extends ConchError {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;

  constructor(
    topic: string,
    partition: number,
    offset: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      ErrorCode.CORRUPT_BATCH,
      `corrupt batch in ${topic}/${partition} at offset ${offset}: ${detail}`,
      options,
    );
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }
}

/**
 * A fetched batch that is not what was stored: its CRC32C does not match its bytes or its header
 * cannot be walked (code CORRUPT_BATCH), or the broker found the stored data damaged and holds it
 * quarantined (code CORRUPT_DATA, as the broker sent it).
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
    options?: { cause?: unknown; code?: number },
  ) {
    super(
      options?.code ?? ErrorCode.CORRUPT_BATCH,
      `corrupt batch in ${topic}/${partition} at offset ${offset}: ${detail}`,
      options,
    );
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }
}

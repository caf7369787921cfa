/**
 * Whether an append carries an idempotent producer's batch. Such a batch must be the only one of
 * its append (as Kafka requires of produce v3 and later): the answer to a retry is one batch's
 * original offsets, so a batch never shares an append whose others might be new.
 */
import { recordSize } from "../../format/batch-header.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { batchProducerId, NO_PRODUCER_ID } from "../../format/producer-fields.js";

/** Reads each batch's producer id in place; `batches` passed validateBatches. */
export function idempotentAppend(batches: Uint8Array): boolean {
  // The common case, one batch: its producer id is all it takes.
  if (recordSize(batches, 0) === batches.length) return batchProducerId(batches, 0) !== NO_PRODUCER_ID;
  let found = false;
  let n = 0;
  for (let at = 0; at < batches.length; at += recordSize(batches, at), n++) {
    if (batchProducerId(batches, at) !== NO_PRODUCER_ID) found = true;
  }
  if (found && n > 1) {
    throw new ConchError(
      ErrorCode.INVALID_BATCH,
      `a batch with a producer id must be the only batch of its partition in a produce (got ${n} batches)`,
    );
  }
  return found;
}

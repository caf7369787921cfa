/**
 * A partition's producer table at open: the snapshot (producer-snapshot.ts) cut back to what the
 * log still holds, then the batches after its offset replayed from the log. A clean close leaves
 * a snapshot at the log end, so nothing is replayed; after a crash the batches since the last
 * snapshot (a segment roll) are. Without a usable snapshot (a log written before producer ids
 * were checked, or a damaged snapshot) the whole log is replayed, once: the next close or roll
 * writes one.
 */
import type { Logger } from "pino";
import { batchBaseOffset, batchCount, recordSize } from "../../format/batch-header.js";
import { batchProducerId, NO_PRODUCER_ID } from "../../format/producer-fields.js";
import { readProducerSnapshot } from "./producer-snapshot.js";
import type { ProducerTable } from "./producer-table.js";

/** Bytes read per step of a replay. */
const REPLAY_READ_BYTES = 1024 * 1024;

export interface ReplaySource {
  logStartOffset: number;
  /** The end of what the log holds. */
  endOffset: number;
  /** Whole stored batches from the one holding `offset` (damaged ranges skipped). */
  read(offset: number, maxBytes: number): Promise<Buffer>;
}

/**
 * Fills the empty `table` with the log's producers. Returns the offset the replay started from:
 * the next open replays from there too unless a newer snapshot is written meanwhile.
 */
export async function recoverProducers(
  dir: string,
  table: ProducerTable,
  maxProducers: number,
  log: ReplaySource,
  logger: Logger | undefined,
): Promise<number> {
  const snapshot = await readProducerSnapshot(dir, maxProducers);
  let from = log.logStartOffset;
  if (snapshot !== null) {
    for (const [id, entry] of snapshot.producers) table.restore(id, entry);
    // A snapshot taken at a roll may hold batches a crash then lost.
    table.truncate(log.endOffset);
    from = Math.min(snapshot.offset, log.endOffset);
  }
  from = Math.max(from, log.logStartOffset);
  const now = Date.now();
  let replayed = 0;
  let offset = from;
  while (offset < log.endOffset) {
    const batches = await log.read(offset, REPLAY_READ_BYTES);
    if (batches.length === 0) break;
    for (let at = 0; at < batches.length; at += recordSize(batches, at)) {
      const base = batchBaseOffset(batches, at);
      const next = base + batchCount(batches, at);
      if (next > offset) offset = next;
      if (base < from || batchProducerId(batches, at) === NO_PRODUCER_ID) continue;
      // Idle time counts from now: a record's timestamp is the producer's to choose, not when it came.
      table.record(batches, at, base, now);
      replayed++;
    }
  }
  table.expire(now);
  if (replayed > 0)
    logger?.debug({ from, replayed, producers: table.size }, "producer state replayed from the log");
  return from;
}

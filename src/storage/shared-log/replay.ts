/**
 * The replay after a crash (docs/shared-log.md, "Crash, replay and stops"): the entries the shared
 * log kept become records *owed* to their partitions, and each partition's open appends those past
 * its recovered end before anything else uses the log. A record gets the offset its producer was
 * told, or the open fails.
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { PartitionIndex } from "../../format/partition-index.js";
import { checkPartitionedBatch } from "../../format/validate.js";
import { DeferredRecords, type SpillSource } from "../deferred-records.js";
import type { PartitionLog } from "../partition-log.js";
import { EntryKind } from "./entry.js";
import type { ReplayEntry } from "./read-back.js";
import type { SharedLog } from "./shared-log.js";
import { EntrySpills } from "./span-source.js";

/** One entry's records for one partition, with the offset its first one was given. */
export interface OwedRun {
  readonly index: PartitionIndex;
  readonly group: number;
  readonly baseOffset: number;
  readonly source: SpillSource;
}

/** Owed runs by topic, then partition, each list in the order the records came. */
export type OwedRecords = Map<string, Map<number, OwedRun[]>>;

/**
 * The runs `entries` owe, counted against `log` (each must be spilled, or found already in its
 * partition, before the entry's segment is retired). Entries of a topic before its deletion, or of
 * a topic `exists` does not know, owe nothing; an entry whose batch or spans do not hold together
 * (which its CRC makes a bug, not damage) is logged and skipped.
 */
export function owedRecords(
  entries: readonly ReplayEntry[],
  log: SharedLog,
  exists: (topic: string, partition: number) => boolean,
  logger?: Logger,
): OwedRecords {
  const deletedAt = new Map<string, number>();
  entries.forEach((e, i) => {
    if (e.kind === EntryKind.TOPIC_DELETED) deletedAt.set(e.topic, i);
  });
  const owed: OwedRecords = new Map();
  entries.forEach((e, i) => {
    if (e.kind !== EntryKind.RECORDS || i < (deletedAt.get(e.topic) ?? -1)) return;
    const batch = e.batch;
    const index =
      checkPartitionedBatch(batch, 0, batch.length, batch.length) === batch.length
        ? new PartitionIndex(batch, 0)
        : null;
    const matches =
      index !== null &&
      index.groups === e.spans.length &&
      e.spans.every((s, g) => s.partition === index.partitions[g] && s.records === index.counts[g]);
    if (!matches) {
      logger?.error(
        { position: e.position, topic: e.topic },
        "shared log entry does not hold together; skipped",
      );
      return;
    }
    const source = new EntrySpills(log, e.position);
    let counted = 0;
    e.spans.forEach((span, g) => {
      if (!exists(e.topic, span.partition)) return;
      let byPartition = owed.get(e.topic);
      if (byPartition === undefined) owed.set(e.topic, (byPartition = new Map()));
      let runs = byPartition.get(span.partition);
      if (runs === undefined) byPartition.set(span.partition, (runs = []));
      runs.push({ index: index!, group: g, baseOffset: span.baseOffset, source });
      counted++;
    });
    if (counted > 0) log.addSpans(e.position, counted);
  });
  return owed;
}

/**
 * Appends the runs past `log`'s end (before anything else uses it); runs it holds already count as
 * spilled. Fails, appending nothing, when a run would not start at the log's end: the partition's
 * files lost records the shared log no longer has (a disk that lost synced data).
 */
export async function replayOwed(log: PartitionLog, runs: readonly OwedRun[]): Promise<number> {
  const deferred = new DeferredRecords();
  let end = log.logEndOffset;
  const found: SpillSource[] = [];
  for (const run of runs) {
    const count = run.index.counts[run.group]!;
    if (run.baseOffset + count <= end && deferred.empty) {
      found.push(run.source);
      continue;
    }
    if (run.baseOffset !== end) {
      throw new ConchError(
        ErrorCode.STORAGE_ERROR,
        `the shared log holds records for offsets ${run.baseOffset}-${run.baseOffset + count - 1} of ${log.dir}, whose log ends at ${end}: records were lost in between`,
      );
    }
    deferred.add(run.index, run.group, run.source);
    end += count;
  }
  for (const s of found) s.spilled();
  if (deferred.empty) return 0;
  const appended = deferred.count;
  const spill = deferred.take(log.config.maxBatchBytes);
  const written = spill.written;
  await new Promise<void>((resolve, reject) => {
    log.appendTo(spill.toBuffer(), false, {
      appended: () => {
        written.appended();
        resolve();
      },
      appendFailed: (err) => {
        written.appendFailed();
        reject(err);
      },
    });
  });
  return appended;
}

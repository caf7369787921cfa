/**
 * Produce version 3's deferred path (docs/shared-log.md, "Step 2, designed"): a checked
 * partitioned batch is written once to the broker's shared log and each partition's records are
 * deferred in its log, which spills them into its own files later. One entry, one write and one
 * acknowledgement per request, where the split path makes a batch, a copy, a write and an
 * acknowledgement per partition.
 *
 * Only a standalone broker has a shared log (cluster mode's replicas read their leaders' logs as
 * they are appended). A request takes this path only when every partition it names is open and
 * can defer (canDefer: not flush=sync, not compacted), and while the entries whose records are not
 * all spilled yet hold less than the broker's bound (`tailCacheBytes`, the bound of recent data in
 * memory); anything else goes the split way. One that names partitions not open yet waits for
 * their opens and then tries again (broker.ts, produce-gate.ts).
 */
import type { Logger } from "pino";
import type { PartitionIndex } from "../format/partition-index.js";
import { childPath } from "../storage/child-path.js";
import type { AppendListener, PartitionLog } from "../storage/partition-log.js";
import { encodeRecordsEntry, encodeTopicDeleted } from "../storage/shared-log/entry.js";
import { type OwedRecords, owedRecords } from "../storage/shared-log/replay.js";
import { SharedLog } from "../storage/shared-log/shared-log.js";
import { EntrySpills, type HeldBytes } from "../storage/shared-log/span-source.js";
import { SharedLogUpkeep } from "../storage/shared-log/upkeep.js";
import type { Acks } from "./broker-requests.js";
import type { Topic } from "./topic.js";

/** The shared log's directory under the data directory. */
export const SHARED_DIR = "shared";

/**
 * What `defer` did: each group's first offset (the records deferred); "split", nothing taken (the
 * request is split and appended partition by partition); or "open-first", nothing taken: some of
 * its partitions are not open, and once they are it may be deferred.
 */
export type DeferOutcome = number[] | "split" | "open-first";

const IGNORED: AppendListener = { appended() {}, appendFailed() {} };

export class SharedProduce {
  readonly #log: SharedLog;
  readonly #upkeep: SharedLogUpkeep;
  readonly #logger: Logger;
  /** Bytes of entries not all spilled, and their bound. */
  readonly #held: HeldBytes = { bytes: 0 };
  readonly #maxHeldBytes: number;

  private constructor(log: SharedLog, logger: Logger, maxHeldBytes: number) {
    this.#log = log;
    this.#logger = logger;
    this.#maxHeldBytes = maxHeldBytes;
    this.#upkeep = new SharedLogUpkeep(log, logger);
  }

  /**
   * Opens the shared log of `dataDir`, and returns with it what its entries owe the partitions
   * `exists` knows (their opens append it: topic.ts, shared-log/replay.ts).
   */
  static async open(
    dataDir: string,
    logger: Logger,
    exists: (topic: string, partition: number) => boolean,
    maxHeldBytes: number,
  ): Promise<{ shared: SharedProduce; owed: OwedRecords }> {
    const { log, entries } = await SharedLog.open(childPath(dataDir, SHARED_DIR), { dataDir, logger });
    const shared = new SharedProduce(log, logger, maxHeldBytes);
    const owed = owedRecords(entries, log, exists, logger);
    if (entries.length > 0) {
      logger.info({ entries: entries.length, topics: owed.size }, "shared log read back after a crash");
    }
    // What it holds goes once every owed record is in its partition.
    shared.#upkeep.start();
    return { shared, owed };
  }

  /**
   * Defers the records of `index` (a checked partitioned batch, whose bytes are `batch`) in `t`'s
   * partitions and writes the batch to the shared log: `listener` is told, its `baseOffset` the
   * entry's position, once that is written (or fsynced, with acks "durable"). Returns each group's
   * first offset, or what else to do (DeferOutcome).
   */
  defer(t: Topic, batch: Buffer, index: PartitionIndex, acks: Acks, listener: AppendListener): DeferOutcome {
    if (acks === "all" || t.internal || this.#held.bytes >= this.#maxHeldBytes) return "split";
    const groups = index.groups;
    const logs = new Array<PartitionLog>(groups);
    const bases = new Array<number>(groups);
    let unopened = false;
    for (let g = 0; g < groups; g++) {
      const log = t.openedPartition(index.partitions[g]!);
      if (log === undefined) {
        // One the topic does not have is answered by the split path, partition by partition; so is
        // a request naming one still to be recovered after a crash, whose open may take long and
        // would hold the topic's other produces behind it (produce-gate.ts) meanwhile.
        const partition = index.partitions[g]!;
        if (partition >= t.partitionCount || !t.known(partition) || !t.defersRecords) return "split";
        unopened = true;
        continue;
      }
      if (!log.canDeferRun(index, g)) return "split";
      logs[g] = log;
      bases[g] = log.logEndOffset;
    }
    if (unopened) return "open-first";
    const spans = bases.map((baseOffset, g) => ({
      partition: index.partitions[g]!,
      baseOffset,
      records: index.counts[g]!,
    }));
    const entry = encodeRecordsEntry(t.name, spans, batch);
    // The deferred records are kept in the entry's copy: the request's frame is reused.
    index.moveTo(entry, entry.length - batch.length);
    const log = this.#log;
    let position: number;
    try {
      position = log.append(entry, acks === "durable", listener);
    } catch (err) {
      // A failed shared log (logged once when it failed): the request goes the split way.
      if (!log.failed) throw err;
      return "split";
    }
    log.addSpans(position, groups);
    const source = new EntrySpills(log, position, groups, entry.length, this.#held);
    for (let g = 0; g < groups; g++) logs[g]!.defer(index, g, source);
    const config = logs[0]!.config;
    this.#upkeep.appended(config.flush === "interval" ? config.flushIntervalMs : null);
    return bases;
  }

  /** A topic was deleted: a replay must not give its records to a new topic of the same name. */
  topicDeleted(name: string): void {
    try {
      this.#log.append(encodeTopicDeleted(name), false, IGNORED);
      this.#upkeep.appended(null);
    } catch (err) {
      this.#logger.error({ err, topic: name }, "topic deletion not written to the shared log");
    }
  }

  /**
   * After every log has closed (spilling what it deferred) and been synced: retires every segment
   * it can and closes. Resolves with whether nothing is left to replay.
   */
  async close(): Promise<boolean> {
    this.#upkeep.close();
    try {
      await this.#log.retire(true);
    } catch (err) {
      this.#logger.warn({ err }, "shared log not retired at the stop; the next start replays it");
    }
    const empty = !this.#log.holdsEntries;
    await this.#log.close();
    return empty;
  }
}

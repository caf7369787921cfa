/**
 * A replicated partition's leader epochs (docs/cluster.md, replication): which epoch's leader
 * wrote each stretch of the log, as (epoch, startOffset) entries in the partition directory's
 * `leader-epoch` file, one entry a line, `<epoch> <startOffset>`. Batches carry no epoch (the CRC
 * leaves out only the base offset, so stamping one would need a new format version); this file is
 * what lets a follower find where its log and the leader's part (truncation on divergence).
 *
 * Entries only grow: epochs strictly, start offsets never backwards. The file is replaced
 * atomically (write, fsync, rename), so a crash leaves the old list or the new one; recovery drops
 * entries that start past the recovered log end. A missing file means no entries: a single-node
 * log, or a replica that never had a role.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomically } from "./file-ops.js";

export const LEADER_EPOCH_NAME = "leader-epoch";

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

/** Where an epoch ended on this log: the answer to a follower's lastFetchedEpoch. */
export interface EpochEnd {
  /** The largest epoch at or below the one asked for, or -1 when there is none. */
  epoch: number;
  /** The start of the next epoch after it, or the log end when it is the latest; -1 with no epoch. */
  endOffset: number;
}

/** More entries than any real log has leader changes: a longer file is damage, not history. */
const MAX_ENTRIES = 100_000;

export class LeaderEpochs {
  readonly #dir: string;
  #entries: EpochEntry[];
  /** Writes of the file, one after another, in call order. */
  #writing: Promise<void> = Promise.resolve();

  private constructor(dir: string, entries: EpochEntry[]) {
    this.#dir = dir;
    this.#entries = entries;
  }

  /** The epochs of a log whose directory was just made: none, and no file to read. */
  static none(dir: string): LeaderEpochs {
    return new LeaderEpochs(dir, []);
  }

  /**
   * Reads `dir`'s epoch file and keeps what agrees with a log ending at `logEndOffset`: entries
   * that start past it are dropped (their data did not survive the crash), as are lines that do not
   * parse or break the order, and everything after them. The file is rewritten when that changed it.
   */
  static async load(dir: string, logEndOffset: number): Promise<LeaderEpochs> {
    let text: string;
    try {
      text = await readFile(join(dir, LEADER_EPOCH_NAME), "utf8");
    } catch {
      return new LeaderEpochs(dir, []);
    }
    const entries: EpochEntry[] = [];
    let clean = true;
    const lines = text.split("\n");
    for (const raw of lines) {
      const line = raw.trim();
      if (line === "") continue;
      const m = /^(\d{1,10}) (\d{1,16})$/.exec(line);
      const last = entries.at(-1);
      const entry = m === null ? null : { epoch: Number(m[1]), startOffset: Number(m[2]) };
      if (
        entry === null ||
        entries.length >= MAX_ENTRIES ||
        entry.startOffset > logEndOffset ||
        (last !== undefined && (entry.epoch <= last.epoch || entry.startOffset < last.startOffset))
      ) {
        clean = false;
        break;
      }
      entries.push(entry);
    }
    const epochs = new LeaderEpochs(dir, entries);
    if (!clean) await epochs.#persist();
    return epochs;
  }

  get entries(): readonly EpochEntry[] {
    return this.#entries;
  }

  /** The latest epoch, or -1 when there is none. */
  get latestEpoch(): number {
    return this.#entries.at(-1)?.epoch ?? -1;
  }

  /**
   * Records that `epoch` starts at `startOffset` (its leader's log end when it took over; a
   * follower learns it from the leader) and resolves once that is on disk. The same entry again is a
   * no-op; an older epoch, or a start before the latest one's, is refused.
   */
  assign(epoch: number, startOffset: number): Promise<void> {
    const last = this.#entries.at(-1);
    if (last !== undefined && last.epoch === epoch && last.startOffset === startOffset) return this.#writing;
    if (!Number.isInteger(epoch) || epoch < 0 || epoch > 0xffff_ffff) {
      return Promise.reject(new RangeError(`leader epoch ${epoch} is not a u32`));
    }
    if (last !== undefined && (epoch <= last.epoch || startOffset < last.startOffset)) {
      return Promise.reject(
        new RangeError(
          `epoch ${epoch} at ${startOffset} does not follow epoch ${last.epoch} at ${last.startOffset}`,
        ),
      );
    }
    // An epoch that wrote nothing gives way to the next one starting at the same offset.
    const entries =
      last !== undefined && last.startOffset === startOffset
        ? this.#entries.slice(0, -1)
        : this.#entries.slice();
    entries.push({ epoch, startOffset });
    this.#entries = entries;
    return this.#persist();
  }

  /** The log was cut to end at `logEndOffset`: entries starting at or after it go. */
  truncateFromEnd(logEndOffset: number): Promise<void> {
    const kept = this.#entries.filter((e) => e.startOffset < logEndOffset);
    if (kept.length === this.#entries.length) return this.#writing;
    this.#entries = kept;
    return this.#persist();
  }

  /**
   * Where `epoch` ended on a log ending at `logEndOffset` (Kafka's OffsetsForLeaderEpoch): the
   * largest epoch at or below it, and the start of the epoch after that, or the log end.
   */
  endOf(epoch: number, logEndOffset: number): EpochEnd {
    const entries = this.#entries;
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!;
      if (e.epoch > epoch) continue;
      const next = entries[i + 1];
      return { epoch: e.epoch, endOffset: next === undefined ? logEndOffset : next.startOffset };
    }
    return { epoch: -1, endOffset: -1 };
  }

  /** The epoch whose leader wrote `offset`, or -1 when no entry covers it. */
  epochAt(offset: number): number {
    const entries = this.#entries;
    for (let i = entries.length - 1; i >= 0; i--)
      if (entries[i]!.startOffset <= offset) return entries[i]!.epoch;
    return -1;
  }

  #persist(): Promise<void> {
    const text = this.#entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join("");
    const path = join(this.#dir, LEADER_EPOCH_NAME);
    const write = this.#writing
      .catch(() => {})
      .then(() => writeFileAtomically(path, this.#dir, Buffer.from(text)));
    this.#writing = write;
    return write;
  }
}

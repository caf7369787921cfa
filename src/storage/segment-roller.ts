/**
 * Rolling to a new active segment. The roll itself is short: take the prepared file, rename it to
 * the new base offset, sync the directory, make it the active segment. Sealing the old segment
 * (fdatasync, truncate to its data, write its index) runs in the background so appends go on; the
 * group commit waits for those fdatasyncs before it calls anything durable.
 */
import { unlink } from "node:fs/promises";
import type { Logger } from "pino";
import type { ConchError } from "../format/errors.js";
import { settleReserve } from "./block-reserve.js";
import { type FileOps, writeFileAtomically } from "./file-ops.js";
import { Segment } from "./segment.js";
import type { SegmentList } from "./segment-list.js";
import { walPath } from "./segment-name.js";
import type { SegmentPreparer } from "./segment-preparer.js";
import { storageError } from "./storage-error.js";

export interface RollerOptions {
  dir: string;
  segments: SegmentList;
  preparer: SegmentPreparer;
  ops: FileOps;
  logger: Logger | undefined;
  /** The log can no longer promise durability (a closed segment's fdatasync failed). */
  fatal: (error: ConchError) => void;
  failed: () => boolean;
}

export class SegmentRoller {
  readonly #o: RollerOptions;
  /** fdatasyncs of closed segments that no group fsync has waited for yet; they never reject. */
  #unsynced: Promise<void>[] = [];

  constructor(options: RollerOptions) {
    this.#o = options;
  }

  /**
   * Makes a new, empty active segment starting where the current one ends; throws a STORAGE_ERROR
   * (changing nothing) when its file cannot be created.
   */
  async roll(segmentBytes: number): Promise<void> {
    const o = this.#o;
    const old = o.segments.active;
    const base = old.nextOffset;
    let prepared: Awaited<ReturnType<SegmentPreparer["take"]>>;
    try {
      prepared = await o.preparer.take(segmentBytes, walPath(o.dir, base));
    } catch (err) {
      throw storageError(`cannot create segment ${base}`, err);
    }
    const seg = new Segment(o.dir, base, Date.now());
    seg.setFile(prepared.file);
    seg.fileSize = prepared.size;
    seg.reservedTo = prepared.reserved;
    o.segments.push(seg);
    const synced = this.#syncClosed(old);
    this.#unsynced.push(synced);
    old.sealing = synced.then(() => this.#finishSeal(old));
    o.logger?.debug({ baseOffset: base, closed: old.baseOffset }, "rolled to a new segment");
  }

  /** Hands the pending fdatasyncs of closed segments to the group commit. */
  takeUnsynced(): Promise<void>[] {
    const unsynced = this.#unsynced;
    this.#unsynced = [];
    return unsynced;
  }

  async #syncClosed(seg: Segment): Promise<void> {
    try {
      await settleReserve(seg);
      await this.#o.ops.datasync(seg.openFile!);
    } catch (err) {
      this.#o.fatal(storageError(`fsync of ${seg.walPath} failed`, err));
    }
  }

  /**
   * Truncates a closed segment to its data and writes its index; a failure only costs a rescan. A
   * segment with a quarantined range gets no index, so that every open scans it and finds the
   * range again (docs/design.md, recovery); a range found while the index was being written
   * takes it away again.
   */
  async #finishSeal(seg: Segment): Promise<void> {
    if (this.#o.failed() || seg.deleted) return;
    try {
      await this.#o.ops.truncate(seg.openFile!, seg.size);
      seg.fileSize = seg.size;
      if (seg.damaged.length > 0) return;
      await writeFileAtomically(seg.indexPath, this.#o.dir, seg.index.bytes());
      if (seg.damaged.length > 0) await unlink(seg.indexPath);
    } catch (err) {
      this.#o.logger?.warn(
        { err, segment: seg.walPath },
        "could not finish closing a segment; it will be rescanned on open",
      );
    }
  }
}

/**
 * The active segment's index, written to `<base>.idx.checkpoint` now and then while the log runs,
 * so that after a crash recovery trusts its entries and scans only from the last one on
 * (recovery.ts) instead of the whole segment: with 10,000 partitions that scan read every byte
 * written since the last clean stop. The file is a prefix of the index: every entry points at a
 * batch that was written when the file was, and recovery checks the batch at the last entry
 * before trusting it (a crash of the machine can lose data the file points at: then the segment
 * is scanned whole, as before).
 *
 * Not the `.idx` itself: that one means a clean stop (every byte fsynced, nothing to scan), and a
 * roll's seal writes it for the closed segment; a checkpoint never races either. A clean stop
 * makes the `.idx` from the checkpoint (`seal`: brought up to date, fsynced, renamed; or made
 * durable with the stop's other files by one syncfs before the rename). No fsync otherwise:
 * losing a checkpoint costs only a longer scan. Written in place: the active segment's index only
 * grows (a log cut back discards its checkpoint first), so each checkpoint after the first appends
 * the entries added since to the same file. A file written whole under a temporary name and
 * renamed made a new inode every time: with 10,000 logs written to, 1,000 a second, and the kernel's search
 * for a free inode past the many just freed grew costly (docs/performance/scale.md). A crash during
 * a write can leave a partial last entry, or a file the entries' checks refuse (recovery.ts,
 * readIndex): then the segment is scanned whole, as with no checkpoint. Whoever cuts the active
 * segment back must `discard` it first.
 */
import { constants } from "node:fs";
import { rename, unlink } from "node:fs/promises";
import { type StagedFile, writeAt } from "./file-ops.js";
import type { Segment } from "./segment.js";
import { INDEX_ENTRY_BYTES, type SegmentIndex } from "./segment-index.js";

/** How often a log that was appended to writes its checkpoint (coarse: logs share wake-ups). */
export const CHECKPOINT_INTERVAL_MS = 10_000;
export const CHECKPOINT_SUFFIX = ".checkpoint";

export function checkpointPath(seg: Segment): string {
  return seg.indexPath + CHECKPOINT_SUFFIX;
}

export class IndexCheckpoint {
  /** The segment, index and entry count last written. */
  #segment: Segment | null = null;
  #index: SegmentIndex | null = null;
  #count = 0;
  #writing: Promise<void> | null = null;

  /** Writes `active`'s index unless it has no new entry, or damage, or a write is under way. */
  write(active: Segment): void {
    const index = active.index;
    if (this.#writing !== null || (index === this.#index && index.count === this.#count)) return;
    if (active.isEmpty || active.damaged.length > 0) return;
    this.#writing = this.#write(active, index).finally(() => {
      this.#writing = null;
    });
  }

  /** Removes the checkpoint of `seg` (waiting for a write in flight): its entries may no longer hold. */
  async discard(seg: Segment): Promise<void> {
    await this.idle();
    if (this.#segment === seg) this.#index = null;
    await unlink(checkpointPath(seg)).catch(() => {});
  }

  /**
   * A clean stop's index of `seg`, the active segment, once its data is durable: the checkpoint
   * brought up to date in place and fsynced with `sync`, then (`commit`) renamed to the segment's
   * `.idx`. Without `sync` the caller makes the file durable before the commit (a stop's one
   * syncfs, stop-sync.ts); until then it is only a checkpoint. No file under a temporary name and
   * no fsync of the directory: a crash that loses the rename leaves the checkpoint, which holds the
   * same entries, and the open after it scans past them only.
   */
  async seal(seg: Segment, sync: boolean): Promise<StagedFile> {
    await this.idle();
    const index = seg.index;
    const count = index.count;
    const path = checkpointPath(seg);
    // Renamed away below: whatever is written next is written whole.
    const from = this.#takeWritten(seg, index);
    const appended =
      from > 0 &&
      (await writeAt(
        path,
        entries(index, from, count),
        from * INDEX_ENTRY_BYTES,
        constants.O_WRONLY,
        -1,
        sync,
      ).then(
        () => true,
        () => false,
      ));
    if (!appended) await writeWhole(path, entries(index, 0, count), sync);
    return { commit: () => rename(path, seg.indexPath), discard: async () => {} };
  }

  /**
   * How many of `index`'s entries the file of `seg` holds (only the ones after them need writing;
   * 0: write it whole), forgotten from now on: the caller is about to change the file.
   */
  #takeWritten(seg: Segment, index: SegmentIndex): number {
    const from = this.#segment === seg && this.#index === index ? this.#count : 0;
    this.#index = null;
    return from;
  }

  /** Resolves once no checkpoint is being written. */
  async idle(): Promise<void> {
    await this.#writing;
  }

  async #write(seg: Segment, index: SegmentIndex): Promise<void> {
    const count = index.count;
    const previous = this.#segment;
    const path = checkpointPath(seg);
    // Until this write ends the file's content is not known: a failure leaves the next to write it whole.
    const from = this.#takeWritten(seg, index);
    try {
      // The segment rolled since the last checkpoint: the closed one has its `.idx` now.
      if (previous !== null && previous !== seg) await unlink(checkpointPath(previous)).catch(() => {});
      this.#segment = seg;
      const bytes = entries(index, from, count);
      if (from === 0) await writeWhole(path, bytes);
      else await writeAt(path, bytes, from * INDEX_ENTRY_BYTES);
      this.#index = index;
      this.#count = count;
      // The log was cut back while the file was written (its index replaced or shorter), or damage
      // was found: the entries written may point past the cut.
      if (seg.index !== index || index.count < count || seg.damaged.length > 0) {
        this.#index = null;
        await unlink(path).catch(() => {});
      }
    } catch {
      // Only a longer scan after a crash; the next checkpoint writes the file whole.
    }
  }
}

/** A copy of entries [from, count) of `index`: the index grows (and may be replaced) while a file is written. */
function entries(index: SegmentIndex, from: number, count: number): Buffer {
  return Buffer.from(index.bytes().subarray(from * INDEX_ENTRY_BYTES, count * INDEX_ENTRY_BYTES));
}

/**
 * The file at `path` made to hold `bytes`: created, or written over in place from the start and cut
 * to their length (the same inode; not truncated first, so a crash meanwhile leaves the entries the
 * file held, which are a prefix of these). Through writeAt's callback API: every log writes its
 * checkpoint every CHECKPOINT_INTERVAL_MS, and with 10,000 logs written to, the fs/promises steps
 * were about a tenth of the broker's event loop (docs/performance/scale.md, "Workload 6b:
 * per-batch costs").
 */
function writeWhole(path: string, bytes: Buffer, sync = false): Promise<void> {
  return writeAt(path, bytes, 0, constants.O_WRONLY | constants.O_CREAT, bytes.length, sync);
}

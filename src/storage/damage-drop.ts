/**
 * Dropping quarantined ranges, by an operator's explicit choice (`conch log repair --drop-damaged`,
 * offline): the ranges' offsets are recorded as dropped (dropped-ranges.ts) first, then each
 * damaged segment is rewritten without its bad bytes (temporary file, fsync, rename), so every good
 * batch keeps its offset and the dropped offsets become a gap that reads skip. A crash between the
 * two steps leaves the damage in place and still quarantined; running the repair again finishes it.
 */
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { addDropped, type OffsetRange } from "./dropped-ranges.js";
import { readFully, syncDir } from "./file-ops.js";
import { CHECKPOINT_SUFFIX } from "./index-checkpoint.js";

const COPY_BYTES = 1024 * 1024;

/** A quarantined range of one segment file of the partition. */
export interface DropTarget extends OffsetRange {
  /** The `.wal` file name. */
  file: string;
  position: number;
  bytes: number;
}

/** Drops `targets` from the partition in `dir`. */
export async function dropDamaged(dir: string, targets: readonly DropTarget[]): Promise<void> {
  const held = targets.filter((t) => t.lastOffset >= t.firstOffset);
  if (held.length > 0) await addDropped(dir, held);
  const files = new Map<string, DropTarget[]>();
  for (const t of targets) {
    if (t.bytes === 0) continue;
    const list = files.get(t.file) ?? [];
    list.push(t);
    files.set(t.file, list);
  }
  for (const [file, cuts] of files) {
    cuts.sort((a, b) => a.position - b.position);
    await rewriteWithout(join(dir, file), cuts);
    await unlink(join(dir, file.replace(/\.wal$/, ".idx"))).catch(() => {});
    // The bytes after a cut moved: the active segment's checkpoint points where they were.
    await unlink(join(dir, file.replace(/\.wal$/, `.idx${CHECKPOINT_SUFFIX}`))).catch(() => {});
  }
  await syncDir(dir);
}

async function rewriteWithout(path: string, cuts: readonly DropTarget[]): Promise<void> {
  const tmp = `${path}.tmp`;
  const src = await open(path, "r");
  const dst = await open(tmp, "w");
  try {
    const size = (await src.stat()).size;
    const buf = Buffer.allocUnsafe(COPY_BYTES);
    let pos = 0;
    let out = 0;
    for (const cut of [...cuts, { position: size, bytes: 0 }]) {
      while (pos < cut.position) {
        const n = await readFully(src, buf, Math.min(COPY_BYTES, cut.position - pos), pos);
        if (n === 0) break;
        await dst.write(buf, 0, n, out);
        pos += n;
        out += n;
      }
      pos = cut.position + cut.bytes;
    }
    await dst.datasync();
  } finally {
    await src.close();
    await dst.close();
  }
  await rename(tmp, path);
}

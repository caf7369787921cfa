/**
 * Putting compacted segment files in place of the originals so that a crash at any moment leaves
 * either all the old segments of a pass or all the new ones (docs/compaction.md, "The swap"):
 *
 * 1. every `<base>.wal.cleaned` and `<base>.idx.cleaned` is written and fsynced;
 * 2. the swap marker `cleaner.swap` (the plan: what to rename, what to delete, the new cleaned
 *    end) is written atomically (temporary file, fsync, rename, directory fsync): the commit point;
 * 3. each `.cleaned` file is renamed over its original, emptied segments are deleted, the
 *    directory is fsynced;
 * 4. `cleaner.checkpoint` takes the new cleaned end (atomically), the marker is removed.
 *
 * At open, a marker means "finish steps 3 and 4" (each is idempotent); `.cleaned` files without a
 * marker are the leftovers of a pass that never committed and are deleted. The checkpoint holds
 * the cleaned end: segments that start below it were compacted and may have offset gaps.
 */
import { readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { syncDir, writeFileAtomically } from "../file-ops.js";
import { indexPath, walPath } from "../segment-name.js";
import { CLEANED_SUFFIX, cleanedIndexPath, cleanedWalPath } from "./cleaned-segment.js";

export const SWAP_MARKER = "cleaner.swap";
export const CHECKPOINT = "cleaner.checkpoint";

export interface SwapPlan {
  /** Segments whose files are replaced; `index` is false for one left empty (its .idx goes). */
  replace: { base: number; index: boolean }[];
  /** Segments compaction emptied: both files are deleted. */
  drop: number[];
  /** Segments starting below this offset have been compacted. */
  cleanedEnd: number;
}

/** Step 2: the commit point. */
export async function writeSwapMarker(dir: string, plan: SwapPlan): Promise<void> {
  await writeFileAtomically(join(dir, SWAP_MARKER), dir, Buffer.from(JSON.stringify(plan)));
}

/** Steps 3 and 4; safe to run again after a crash part-way. */
export async function completeSwap(dir: string, plan: SwapPlan): Promise<void> {
  for (const { base, index } of plan.replace) {
    await renameIfPresent(cleanedWalPath(dir, base), walPath(dir, base));
    if (index) await renameIfPresent(cleanedIndexPath(dir, base), indexPath(dir, base));
    else await unlinkIfPresent(indexPath(dir, base));
  }
  for (const base of plan.drop) {
    await unlinkIfPresent(walPath(dir, base));
    await unlinkIfPresent(indexPath(dir, base));
    await unlinkIfPresent(cleanedWalPath(dir, base));
    await unlinkIfPresent(cleanedIndexPath(dir, base));
  }
  await syncDir(dir);
  await writeCheckpoint(dir, plan.cleanedEnd);
  await unlinkIfPresent(join(dir, SWAP_MARKER));
  await syncDir(dir);
}

/** Takes back a marker whose writing failed part-way (it may or may not be there). */
export async function removeSwapMarker(dir: string): Promise<void> {
  await unlinkIfPresent(join(dir, SWAP_MARKER));
  await syncDir(dir);
}

export async function writeCheckpoint(dir: string, cleanedEnd: number): Promise<void> {
  await writeFileAtomically(join(dir, CHECKPOINT), dir, Buffer.from(`${cleanedEnd}\n`));
}

/** The cleaned end recorded in `dir`, 0 when there is none (or it cannot be read). */
export async function readCheckpoint(dir: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(join(dir, CHECKPOINT), "utf8");
  } catch {
    return 0;
  }
  const value = Number(text.trim());
  return Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/**
 * Run at open, before the segments are recovered: finishes a committed swap, removes the files of
 * an uncommitted one, and returns the cleaned end with the directory's names (`names`, as read by
 * the caller, or read again when the swap changed them). A directory that holds no file of the
 * cleaner costs no file system call: with thousands of partitions, each call at open counts.
 */
export async function recoverSwap(
  dir: string,
  logger: Logger | undefined,
  names: readonly string[],
): Promise<{ cleanedEnd: number; names: readonly string[] }> {
  const plan = names.includes(SWAP_MARKER) ? await readPlan(dir, logger) : null;
  if (plan !== null) {
    await completeSwap(dir, plan);
    logger?.info(
      { replaced: plan.replace.length, dropped: plan.drop.length },
      "finished an interrupted compaction swap",
    );
  }
  let removed = 0;
  for (const name of plan === null ? names : await readdir(dir)) {
    if (name.endsWith(CLEANED_SUFFIX)) {
      await unlinkIfPresent(join(dir, name));
      removed++;
    }
  }
  if (removed > 0) logger?.info({ files: removed }, "removed the files of an unfinished compaction");
  const changed = plan !== null || removed > 0 || names.includes(SWAP_MARKER);
  const now = changed ? await readdir(dir) : names;
  return { cleanedEnd: now.includes(CHECKPOINT) ? await readCheckpoint(dir) : 0, names: now };
}

async function readPlan(dir: string, logger: Logger | undefined): Promise<SwapPlan | null> {
  let text: string;
  try {
    text = await readFile(join(dir, SWAP_MARKER), "utf8");
  } catch {
    return null;
  }
  const plan = parsePlan(text);
  if (plan === null) {
    // Written atomically, so this is damage from outside: the old files are the safer guess.
    logger?.error({ marker: join(dir, SWAP_MARKER) }, "unreadable compaction swap marker; ignoring it");
    await unlinkIfPresent(join(dir, SWAP_MARKER));
  }
  return plan;
}

function parsePlan(text: string): SwapPlan | null {
  try {
    const raw: unknown = JSON.parse(text);
    if (typeof raw !== "object" || raw === null) return null;
    const { replace, drop, cleanedEnd } = raw as Record<string, unknown>;
    if (!Array.isArray(replace) || !Array.isArray(drop) || !isOffset(cleanedEnd)) return null;
    const plan: SwapPlan = { replace: [], drop: [], cleanedEnd };
    for (const r of replace as unknown[]) {
      if (typeof r !== "object" || r === null) return null;
      const { base, index } = r as Record<string, unknown>;
      if (!isOffset(base) || typeof index !== "boolean") return null;
      plan.replace.push({ base, index });
    }
    for (const base of drop as unknown[]) {
      if (!isOffset(base)) return null;
      plan.drop.push(base);
    }
    return plan;
  } catch {
    return null;
  }
}

function isOffset(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

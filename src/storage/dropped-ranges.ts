/**
 * Offsets an operator dropped with `conch log repair --drop-damaged` (docs/design.md, recovery):
 * damaged bytes removed from their segment, leaving a gap in the offsets that readers skip, as
 * they skip offsets that compaction removed. The partition directory keeps them in `dropped.offsets`,
 * one range a line, `<firstOffset> <lastOffset>`, so that recovery and `conch log verify` take the
 * gap for a decision rather than for damage. A missing file means none.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomically } from "./file-ops.js";

export const DROPPED_NAME = "dropped.offsets";

export interface OffsetRange {
  firstOffset: number;
  lastOffset: number;
}

/** The dropped ranges recorded in `dir`; lines that do not parse are ignored (a gap is then damage). */
export async function readDropped(dir: string): Promise<OffsetRange[]> {
  let text: string;
  try {
    text = await readFile(join(dir, DROPPED_NAME), "utf8");
  } catch {
    return [];
  }
  const out: OffsetRange[] = [];
  for (const line of text.split("\n")) {
    const m = /^(\d{1,16}) (\d{1,16})$/.exec(line.trim());
    if (m === null) continue;
    const firstOffset = Number(m[1]);
    const lastOffset = Number(m[2]);
    if (Number.isSafeInteger(lastOffset) && lastOffset >= firstOffset) out.push({ firstOffset, lastOffset });
  }
  return out;
}

/** Records `ranges` as dropped in `dir` besides those already there (atomically). */
export async function addDropped(dir: string, ranges: readonly OffsetRange[]): Promise<void> {
  const all = [...(await readDropped(dir)), ...ranges].sort((a, b) => a.firstOffset - b.firstOffset);
  const text = all.map((r) => `${r.firstOffset} ${r.lastOffset}\n`).join("");
  await writeFileAtomically(join(dir, DROPPED_NAME), dir, Buffer.from(text));
}

/** Whether offsets `first` to `last` were all dropped. */
export function isDropped(ranges: readonly OffsetRange[], first: number, last: number): boolean {
  let from = first;
  for (const r of ranges) {
    if (r.firstOffset <= from && r.lastOffset >= from) from = r.lastOffset + 1;
    if (from > last) return true;
  }
  return false;
}

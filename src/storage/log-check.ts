/**
 * The offline check of a partition directory behind `conch log verify` and `conch log repair`:
 * every segment is scanned from byte 0 (framing and CRC of every batch, offsets following on), and
 * every closed segment's index is compared with the one the scan builds. Nothing is changed here.
 */
import { open, readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { batchBaseOffset } from "../format/batch-header.js";
import { CHECKPOINT } from "./compaction/swap.js";
import { isDropped, readDropped } from "./dropped-ranges.js";
import { Segment } from "./segment.js";
import { PREPARED_NAME, parseSegmentName } from "./segment-name.js";
import { scanSegment } from "./segment-scan.js";

/** Index entries as the broker writes them (LogConfig.indexIntervalBytes' default). */
const INDEX_INTERVAL_BYTES = 4096;

export type FindingKind = "damaged" | "torn-tail" | "missing-offsets" | "index-missing" | "index-disagrees";

export interface Finding {
  kind: FindingKind;
  /** The file concerned (a segment's `.wal` or `.idx`), relative to the partition directory. */
  file: string;
  position: number;
  bytes: number;
  /** The offsets concerned; lastOffset < firstOffset when none. */
  firstOffset: number;
  lastOffset: number;
  detail: string;
  /** What repair does about it (what the broker would also do on open). */
  repair: string;
}

export interface PartitionCheck {
  segments: number;
  batches: number;
  findings: Finding[];
}

/** Checks the partition directory `dir` (read only). */
export async function checkPartition(dir: string): Promise<PartitionCheck> {
  const names = await readdir(dir);
  const compacted = names.includes(CHECKPOINT);
  const bases = names
    .filter((n) => n !== PREPARED_NAME)
    .map((n) => parseSegmentName(n))
    .filter((p) => p?.kind === "wal")
    .map((p) => p!.baseOffset)
    .sort((a, b) => a - b);
  const dropped = await readDropped(dir);
  const findings: Finding[] = [];
  let batches = 0;
  let expected = -1;
  for (let i = 0; i < bases.length; i++) {
    const base = bases[i]!;
    const isLast = i === bases.length - 1;
    const seg = new CountingSegment(dir, base);
    const wal = basename(seg.walPath);
    if (expected >= 0 && base > expected && !compacted && !isDropped(dropped, expected, base - 1)) {
      findings.push({
        kind: "missing-offsets",
        file: wal,
        position: 0,
        bytes: 0,
        firstOffset: expected,
        lastOffset: base - 1,
        detail: "no segment file holds these offsets",
        repair: "keep them quarantined",
      });
    }
    const file = await open(seg.walPath, "r");
    let fileSize: number;
    let tailDamaged = false;
    try {
      fileSize = (await file.stat()).size;
      const result = await scanSegment(file, fileSize, seg, 0, base, {
        indexIntervalBytes: INDEX_INTERVAL_BYTES,
        allowGaps: compacted,
        quarantine: true,
        dropped,
      });
      for (const r of seg.damaged) {
        findings.push({ kind: "damaged", file: wal, ...rangeFields(r), repair: "keep it quarantined" });
      }
      if (result.end < fileSize && !(isLast && result.stop === "zero-tail")) {
        const nextBase = isLast ? seg.nextOffset : bases[i + 1]!;
        const torn = isLast || nextBase <= seg.nextOffset;
        findings.push({
          kind: torn ? "torn-tail" : "damaged",
          file: wal,
          position: result.end,
          bytes: fileSize - result.end,
          firstOffset: seg.nextOffset,
          lastOffset: torn ? seg.nextOffset - 1 : nextBase - 1,
          detail: result.detail || "zeros where a batch should be",
          repair: torn
            ? "cut the file there (the bytes hold no offsets that a later segment holds)"
            : "keep it quarantined",
        });
        if (!torn) {
          tailDamaged = true;
          seg.nextOffset = nextBase;
        }
      }
    } finally {
      await file.close();
    }
    batches += seg.batches;
    expected = seg.nextOffset;
    // A damaged segment keeps no index (the broker rescans it at every open).
    if (!isLast && seg.damaged.length === 0 && !tailDamaged && seg.nextOffset > base)
      await checkIndex(seg, findings);
  }
  return { segments: bases.length, batches, findings };
}

async function checkIndex(seg: CountingSegment, findings: Finding[]): Promise<void> {
  const idx = basename(seg.indexPath);
  let stored: Buffer;
  try {
    stored = await readFile(seg.indexPath);
  } catch {
    findings.push(indexFinding("index-missing", idx, "no index file", "rebuild it"));
    return;
  }
  // Entries must point at batch starts holding their offsets; the interval may differ from ours.
  const n = Math.floor(stored.length / 16);
  let bad = stored.length % 16 !== 0 || n === 0 ? "not whole 16-byte entries" : "";
  for (let i = 0; i < n && bad === ""; i++) {
    const rel = stored.readUInt32BE(i * 16);
    const pos = stored.readUInt32BE(i * 16 + 4);
    const at = seg.starts.get(pos);
    if (at === undefined || (i > 0 && at - seg.baseOffset !== rel) || (i === 0 && (rel !== 0 || pos !== 0))) {
      bad = `entry ${i} (offset +${rel} at byte ${pos}) points at no batch holding that offset`;
    }
  }
  if (bad !== "") findings.push(indexFinding("index-disagrees", idx, bad, "rebuild it"));
}

function indexFinding(kind: FindingKind, file: string, detail: string, repair: string): Finding {
  return { kind, file, position: 0, bytes: 0, firstOffset: 0, lastOffset: -1, detail, repair };
}

function rangeFields(r: Segment["damaged"][number]): Omit<Finding, "kind" | "file" | "repair"> {
  return {
    position: r.position,
    bytes: r.length,
    firstOffset: r.firstOffset,
    lastOffset: r.lastOffset,
    detail: r.reason,
  };
}

/** A scratch segment that also remembers where each batch starts and counts them. */
class CountingSegment extends Segment {
  readonly starts = new Map<number, number>();
  batches = 0;

  constructor(dir: string, base: number) {
    super(dir, base, 0);
  }

  override noteBatch(buf: Uint8Array, at: number, position: number, indexIntervalBytes: number): void {
    this.starts.set(position, batchBaseOffset(buf, at));
    this.batches++;
    super.noteBatch(buf, at, position, indexIntervalBytes);
  }
}

/** Partition directories under `<dataDir>/topics`: [topic, partition, path], sorted. */
export async function partitionDirs(dataDir: string): Promise<[string, string, string][]> {
  const root = join(dataDir, "topics");
  const out: [string, string, string][] = [];
  for (const topic of (await readdir(root).catch(() => [] as string[])).sort()) {
    if (topic.startsWith("~")) continue;
    const entries = await readdir(join(root, topic), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (e.isDirectory() && /^\d+$/.test(e.name)) out.push([topic, e.name, join(root, topic, e.name)]);
    }
  }
  return out.sort((a, b) => a[0].localeCompare(b[0]) || Number(a[1]) - Number(b[1]));
}

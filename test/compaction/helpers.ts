/** Shared helpers of the compaction tests: keyed batches, reading a compacted log back, the model. */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { batchCount, batchLastOffset, recordSize } from "../../src/format/batch-header.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { checkBatch } from "../../src/format/validate.js";
import { type LogConfig, logConfig } from "../../src/storage/config.js";
import type { PartitionLog } from "../../src/storage/partition-log.js";
import { parseSegmentName } from "../../src/storage/segment-name.js";

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "conch-compaction-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Tiny segments (many rolls), compaction only when asked (the timer is far away). */
export function compactConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return logConfig({
    segmentBytes: 1024,
    indexIntervalBytes: 128,
    cleanupPolicy: "compact",
    deleteRetentionMs: 1000,
    compactionDelayMs: 3_600_000,
    ...overrides,
  });
}

export const T0 = 1_700_000_000_000;

/** One record as the tests describe it; `value` null is a tombstone. */
export interface Put {
  key: string;
  value: string | null;
  timestampMs: number;
}

const builder = new BatchBuilder({ slabBytes: 64 * 1024 });

/** A batch of keyed records (a null value is a tombstone). */
export function keyedBatch(records: readonly Put[]): Buffer {
  for (const r of records) builder.add(r.value, r.key, r.timestampMs);
  return Buffer.from(builder.finish());
}

export interface StoredRecord {
  offset: number;
  key: string | null;
  /** null for a tombstone. */
  value: string | null;
  timestampMs: number;
}

/**
 * Reads every visible record, checking on the way that each batch is valid (CRC included), that
 * offsets strictly increase, and that every read returns whole batches.
 */
export async function readAll(log: PartitionLog, maxBytes = 512): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let offset = log.logStartOffset;
  let last = -1;
  const cursor = new RecordCursor();
  for (;;) {
    const { records, highWatermark } = await log.read(offset, maxBytes);
    if (records.length === 0) {
      if (offset < highWatermark) {
        // Only possible when nothing survives between offset and the high watermark.
        return out;
      }
      return out;
    }
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      const size = checkBatch(records, at, records.length, 1 << 30);
      if (size < 0) throw new Error(`invalid batch at ${at} (status ${size}) reading from ${offset}`);
    }
    cursor.reset(records);
    while (cursor.next()) {
      if (cursor.offset < offset) continue;
      if (cursor.offset <= last) throw new Error(`offset ${cursor.offset} after ${last}`);
      last = cursor.offset;
      const key = cursor.key();
      out.push({
        offset: cursor.offset,
        key: key === null ? null : key.toString(),
        value: cursor.isTombstone ? null : cursor.value().toString(),
        timestampMs: cursor.timestampMs,
      });
    }
    let next = offset;
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      next = batchLastOffset(records, at) + 1;
      if (batchCount(records, at) < 1) throw new Error("empty batch");
    }
    offset = next;
  }
}

/** The first record at or after `offset` as a fetch from `offset` returns it, or null. */
export async function firstFrom(log: PartitionLog, offset: number): Promise<number | null> {
  const { records } = await log.read(offset, 1);
  const cursor = new RecordCursor(records);
  while (cursor.next()) if (cursor.offset >= offset) return cursor.offset;
  return null;
}

/** Base offsets of the `.wal` files in `dir`, sorted. */
export async function segmentBases(dir: string): Promise<number[]> {
  const bases: number[] = [];
  for (const name of await readdir(dir)) {
    const parsed = parseSegmentName(name);
    if (parsed?.kind === "wal") bases.push(parsed.baseOffset);
  }
  return bases.sort((a, b) => a - b);
}

/**
 * What one compaction at `nowMs` leaves, per the spec: everything from the active segment on, and
 * before it the newest record of each key unless it is a tombstone older than the retention.
 */
export function compactModel(
  records: readonly StoredRecord[],
  activeBase: number,
  nowMs: number,
  deleteRetentionMs: number,
): StoredRecord[] {
  const latest = new Map<string | null, number>();
  for (const r of records) latest.set(r.key, r.offset);
  return records.filter(
    (r) =>
      r.offset >= activeBase ||
      (r.key !== null &&
        latest.get(r.key) === r.offset &&
        !(r.value === null && nowMs - r.timestampMs > deleteRetentionMs)),
  );
}

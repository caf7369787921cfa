/** Shared helpers of the storage tests: temporary directories, batches, reading a log back. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { batchBaseOffset, batchCount, recordSize } from "../../src/format/batch-header.js";
import { StoredKafkaToConch } from "../../src/format/kafka/stored-kafka.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { type LogConfig, logConfig } from "../../src/storage/config.js";
import type { PartitionLog } from "../../src/storage/partition-log.js";

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "conch-storage-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Small segments, no background timers that matter in a test. */
export function testConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return logConfig({ segmentBytes: 64 * 1024, indexIntervalBytes: 512, ...overrides });
}

const builder = new BatchBuilder({ slabBytes: 64 * 1024 });

/** A batch of `count` records whose values are `${tag}-${i}`, all with timestamp `timestampMs`. */
export function makeBatch(tag: string, count = 3, timestampMs = 1_700_000_000_000): Buffer {
  for (let i = 0; i < count; i++) builder.add(`${tag}-${i}`, null, timestampMs);
  return Buffer.from(builder.finish());
}

export interface StoredRecord {
  offset: number;
  value: string;
  timestampMs: number;
}

/** Reads every visible record of `log` back, checking batches are contiguous. */
const toConch = new StoredKafkaToConch();

export async function readAll(log: PartitionLog, maxBytes = 4096): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let offset = log.logStartOffset;
  for (;;) {
    const { records, highWatermark } = await log.read(offset, maxBytes);
    if (records.length === 0) {
      if (offset !== highWatermark) throw new Error(`empty read at ${offset} below hw ${highWatermark}`);
      return out;
    }
    // Kafka batches stored as they came are read as Conch copies, as native readers get them.
    const cursor = new RecordCursor(toConch.convert(records));
    while (cursor.next()) {
      if (cursor.offset >= offset) {
        out.push({
          offset: cursor.offset,
          value: cursor.value().toString(),
          timestampMs: cursor.timestampMs,
        });
      }
    }
    let at = 0;
    let last = offset;
    while (at < records.length) {
      last = batchBaseOffset(records, at) + batchCount(records, at);
      at += recordSize(records, at);
    }
    offset = last;
  }
}

/** Asserts-free check that records are exactly offsets from..to-1 in order. */
export function offsetsOf(records: StoredRecord[]): number[] {
  return records.map((r) => r.offset);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/**
 * A partition log's settings (the storage contract in docs/design.md), their defaults, and the one
 * place they are checked. Every number is checked here so that the rest of storage can trust them.
 */
import { MAX_TIMER_MS } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { LARGEST_BATCH_BYTES, MIN_BATCH_SIZE } from "../format/layout.js";

export type FlushPolicy = "sync" | "interval" | "none";
/** What removes old data: retention by age and size, compaction by key, or both (docs/compaction.md). */
export type CleanupPolicy = "delete" | "compact" | "compact,delete";
export const CLEANUP_POLICIES: readonly CleanupPolicy[] = ["delete", "compact", "compact,delete"];
/** How a read of a quarantined range is answered: CORRUPT_DATA, or the batches after it. */
export type CorruptDataPolicy = "fail" | "skip";
export const CORRUPT_DATA_POLICIES: readonly CorruptDataPolicy[] = ["fail", "skip"];
/** When old segments are read with direct I/O (storage/log-reader.ts): "auto" once found cold. */
export type DirectReads = "auto" | "on" | "off";
export const DIRECT_READS: readonly DirectReads[] = ["auto", "on", "off"];

export interface LogConfig {
  /** Roll the active segment when full (default 128 MiB); the active file is preallocated to this size. */
  segmentBytes: number;
  /** Roll when older than this (default 7 days). */
  segmentMs: number;
  /** One index entry at least every N bytes (default 4096). */
  indexIntervalBytes: number;
  /** Default "interval". */
  flush: FlushPolicy;
  /** Default 1000. */
  flushIntervalMs: number;
  /** Delete closed segments whose newest record is older; -1 = forever (default 7 days). */
  retentionMs: number;
  /** Keep the partition under this many bytes; -1 = no limit (default). */
  retentionBytes: number;
  /** Default 4 MiB. */
  maxBatchBytes: number;
  /** Default "delete". With "compact" alone, retentionMs and retentionBytes delete nothing. */
  cleanupPolicy: CleanupPolicy;
  /** A tombstone is removed by compaction this long after its record timestamp (default 24 h). */
  deleteRetentionMs: number;
  /** Compaction leaves a segment alone until its newest record is this old (default 0). */
  minCompactionLagMs: number;
  /** A closed segment of a compacted log is taken up within this long (default 30 s). */
  compactionDelayMs: number;
  /** Cap on compaction's reads plus writes, in bytes per second; -1 = no cap (default). */
  compactionBytesPerSec: number;
  /** A read of a quarantined range fails with CORRUPT_DATA ("fail", default) or skips past it. */
  corruptData: CorruptDataPolicy;
  /**
   * Count appends, fetches and fsyncs for metrics (default true). Read when the log opens; off,
   * the hot path skips the counters and the clock reads (docs/performance/features.md, metrics cost).
   */
  metrics: boolean;
  /**
   * Reads of closed segments with direct I/O (O_DIRECT), which neither fills the page cache nor
   * copies through it: "auto" (default) once a segment is found not cached, "on" always, "off" never.
   */
  directReads: DirectReads;
  /** An idempotent producer idle this long is forgotten by the partition (default 24 h, Kafka's). */
  producerIdExpirationMs: number;
  /** Idempotent producers a partition remembers at most; past it the longest idle goes (default 1000). */
  maxProducerIds: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 128 * 1024 * 1024,
  segmentMs: 7 * DAY_MS,
  indexIntervalBytes: 4096,
  flush: "interval",
  flushIntervalMs: 1000,
  retentionMs: 7 * DAY_MS,
  retentionBytes: -1,
  maxBatchBytes: 4 * 1024 * 1024,
  cleanupPolicy: "delete",
  deleteRetentionMs: DAY_MS,
  minCompactionLagMs: 0,
  compactionDelayMs: 30_000,
  compactionBytesPerSec: -1,
  corruptData: "fail",
  metrics: true,
  directReads: "auto",
  producerIdExpirationMs: DAY_MS,
  maxProducerIds: 1000,
});

/**
 * Index positions are u32, and a segment may exceed segmentBytes by one batch (a batch never
 * straddles two segments), so both limits together stay well below 4 GiB.
 */
export const MAX_SEGMENT_BYTES = 2 * 1024 * 1024 * 1024;
export const MIN_SEGMENT_BYTES = 512;
export const MAX_BATCH_BYTES_LIMIT = LARGEST_BATCH_BYTES;
/** About 150 bytes each: a partition's producer table stays under 150 MB. */
export const MAX_PRODUCER_IDS = 1_000_000;

/** The defaults with `overrides` applied, checked. */
export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return validateLogConfig({ ...DEFAULT_LOG_CONFIG, ...overrides });
}

/** Returns a checked copy of `config`, or throws INVALID_CONFIG naming the first bad setting. */
export function validateLogConfig(config: LogConfig): LogConfig {
  checkInt("segmentBytes", config.segmentBytes, MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES);
  checkInt("segmentMs", config.segmentMs, 1, Number.MAX_SAFE_INTEGER);
  checkInt("indexIntervalBytes", config.indexIntervalBytes, 0, MAX_SEGMENT_BYTES);
  if (config.flush !== "sync" && config.flush !== "interval" && config.flush !== "none") {
    throw invalid(`flush must be "sync", "interval" or "none", got ${String(config.flush)}`);
  }
  checkInt("flushIntervalMs", config.flushIntervalMs, 1, MAX_TIMER_MS);
  checkLimit("retentionMs", config.retentionMs);
  checkLimit("retentionBytes", config.retentionBytes);
  checkInt("maxBatchBytes", config.maxBatchBytes, MIN_BATCH_SIZE, MAX_BATCH_BYTES_LIMIT);
  if (!CLEANUP_POLICIES.includes(config.cleanupPolicy)) {
    throw invalid(
      `cleanupPolicy must be one of ${CLEANUP_POLICIES.join(", ")}, got ${String(config.cleanupPolicy)}`,
    );
  }
  checkInt("deleteRetentionMs", config.deleteRetentionMs, 0, Number.MAX_SAFE_INTEGER);
  checkInt("minCompactionLagMs", config.minCompactionLagMs, 0, Number.MAX_SAFE_INTEGER);
  checkInt("compactionDelayMs", config.compactionDelayMs, 1, MAX_TIMER_MS);
  if (config.compactionBytesPerSec !== -1) {
    checkInt("compactionBytesPerSec", config.compactionBytesPerSec, 1, Number.MAX_SAFE_INTEGER);
  }
  if (!DIRECT_READS.includes(config.directReads)) {
    throw invalid(`directReads must be "auto", "on" or "off", got ${String(config.directReads)}`);
  }
  if (!CORRUPT_DATA_POLICIES.includes(config.corruptData)) {
    throw invalid(`corruptData must be "fail" or "skip", got ${String(config.corruptData)}`);
  }
  checkInt("producerIdExpirationMs", config.producerIdExpirationMs, 1, Number.MAX_SAFE_INTEGER);
  checkInt("maxProducerIds", config.maxProducerIds, 1, MAX_PRODUCER_IDS);
  return {
    segmentBytes: config.segmentBytes,
    segmentMs: config.segmentMs,
    indexIntervalBytes: config.indexIntervalBytes,
    flush: config.flush,
    flushIntervalMs: config.flushIntervalMs,
    retentionMs: config.retentionMs,
    retentionBytes: config.retentionBytes,
    maxBatchBytes: config.maxBatchBytes,
    cleanupPolicy: config.cleanupPolicy,
    deleteRetentionMs: config.deleteRetentionMs,
    minCompactionLagMs: config.minCompactionLagMs,
    compactionDelayMs: config.compactionDelayMs,
    compactionBytesPerSec: config.compactionBytesPerSec,
    corruptData: config.corruptData,
    metrics: config.metrics !== false,
    directReads: config.directReads,
    producerIdExpirationMs: config.producerIdExpirationMs,
    maxProducerIds: config.maxProducerIds,
  };
}

function checkInt(name: string, value: unknown, min: number, max: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
}

/** -1 (no limit) or a non-negative integer. */
function checkLimit(name: string, value: unknown): void {
  if (value === -1) return;
  checkInt(name, value, 0, Number.MAX_SAFE_INTEGER);
}

function invalid(message: string): ConchError {
  return new ConchError(ErrorCode.INVALID_CONFIG, message);
}

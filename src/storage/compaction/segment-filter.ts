/**
 * Deciding, record by record, what of a closed segment survives compaction, and handing the
 * survivors to the writer of the new segment. A record stays when no newer record has its key (the
 * key map says which offset is the newest), unless it is a tombstone (a key with a null value)
 * older than deleteRetentionMs; records without a key go (an empty key is a key). Every batch is
 * checked in full (CRC included) first: a damaged batch is reported (DamageFound) instead of
 * coming out with a fresh, valid-looking CRC. Records are copied whole, headers and all.
 */
import { batchCount, recordSize } from "../../format/batch-header.js";
import { batchCodec } from "../../format/compressed-batch.js";
import { isStoredKafkaBatch, StoredKafkaToConch } from "../../format/kafka/stored-kafka.js";
import { COMPRESSION_NONE, HEADER_SIZE, MIN_BATCH_SIZE } from "../../format/layout.js";
import { RecordCursor } from "../../format/record-cursor.js";
import { batchStatusMessage, checkBatch } from "../../format/validate.js";
import type { LogConfig } from "../config.js";
import { DamageFound } from "../damaged-range.js";
import type { Segment } from "../segment.js";
import type { CleanedSegmentWriter } from "./cleaned-segment.js";
import type { IoThrottle } from "./io-throttle.js";
import { DIGEST_BYTES, type KeyOffsetMap, keyDigest } from "./key-map.js";

/** Bytes read per step. */
const CHUNK_BYTES = 128 * 1024;

export class SegmentFilter {
  readonly #throttle: IoThrottle;
  readonly #digest = Buffer.allocUnsafe(DIGEST_BYTES);
  readonly #cursor = new RecordCursor();
  /** Made on the first Kafka batch met: it holds a 1 MiB slab, and a log that never compacts needs none. */
  #toConch: StoredKafkaToConch | null = null;
  #positions = new Int32Array(64);
  #ends = new Int32Array(64);
  #keep = new Uint8Array(64);

  constructor(throttle: IoThrottle) {
    this.#throttle = throttle;
  }

  /**
   * Walks every batch of `seg`, deciding for each record whether it stays. A dry run (`writer`
   * null) stops at the first record to remove; otherwise the survivors go to `writer`. Returns the
   * records removed and when the oldest kept tombstone expires.
   */
  async filterSegment(
    seg: Segment,
    map: KeyOffsetMap,
    nowMs: number,
    config: LogConfig,
    writer: CleanedSegmentWriter | null,
    signal: AbortSignal,
  ): Promise<{ removed: number; due: number }> {
    const limit = seg.size;
    const out = { removed: 0, due: Number.POSITIVE_INFINITY };
    let pos = 0;
    let want = CHUNK_BYTES;
    while (pos < limit) {
      signal.throwIfAborted();
      const len = Math.min(want, limit - pos);
      const buf = Buffer.allocUnsafe(len);
      const n = await seg.read(buf, len, pos);
      await this.#throttle.take(n, signal);
      let at = 0;
      let need = 0;
      while (at + HEADER_SIZE <= n) {
        const size = recordSize(buf, at);
        if (size < MIN_BATCH_SIZE || pos + at + size > limit) throw corrupt(seg, pos + at, "bad batch size");
        if (at + size > n) {
          need = size;
          break;
        }
        // Never give a damaged batch a fresh CRC: rewriting it would hide the damage.
        const status = checkBatch(buf, at, at + size, size);
        if (status < 0) throw corrupt(seg, pos + at, batchStatusMessage(status));
        this.#filterBatch(buf, at, size, map, nowMs, config, writer, out);
        if (writer === null && out.removed > 0) return out;
        at += size;
      }
      if (at === 0 && need === 0) throw corrupt(seg, pos, "bad batch size");
      pos += at;
      want = Math.max(need, CHUNK_BYTES);
      if (writer !== null) await writer.maybeFlush();
    }
    return out;
  }

  #filterBatch(
    buf: Buffer,
    at: number,
    size: number,
    map: KeyOffsetMap,
    nowMs: number,
    config: LogConfig,
    writer: CleanedSegmentWriter | null,
    out: { removed: number; due: number },
  ): void {
    // A compressed batch is kept whole (docs/compaction.md): its records are never dropped here,
    // though its keys count in the map, so the older records they supersede elsewhere go.
    if (batchCodec(buf, at) !== COMPRESSION_NONE) {
      writer?.copyBatch(buf, at, at + size);
      return;
    }
    const count = batchCount(buf, at);
    if (this.#keep.length < count) {
      const n = Math.max(count, this.#keep.length * 2);
      this.#positions = new Int32Array(n);
      this.#ends = new Int32Array(n);
      this.#keep = new Uint8Array(n);
    }
    const positions = this.#positions;
    const ends = this.#ends;
    const keep = this.#keep;
    // A Kafka batch stored as it came is walked as a Conch copy, and kept or dropped whole below.
    const kafka = isStoredKafkaBatch(buf, at);
    const walked = kafka
      ? (this.#toConch ??= new StoredKafkaToConch()).convert(buf.subarray(at, at + size))
      : buf;
    const cursor = kafka ? this.#cursor.reset(walked) : this.#cursor.reset(buf, at, at + size);
    const digest = this.#digest;
    const retention = config.deleteRetentionMs;
    let kept = 0;
    for (let i = 0; cursor.next(); i++) {
      // The whole record, headers included (they follow the value in the extended layout).
      positions[i] = cursor.recordStart;
      ends[i] = cursor.recordEnd;
      let stays = !cursor.keyNull;
      if (stays) {
        keyDigest(walked, cursor.keyStart, cursor.keyEnd, digest, 0);
        stays = map.get(digest, 0) <= cursor.offset;
      }
      if (stays && cursor.isTombstone) {
        const ts = cursor.timestampMs;
        if (nowMs - ts > retention) stays = false;
        else if (ts + retention < out.due) out.due = ts + retention;
      }
      keep[i] = stays ? 1 : 0;
      if (stays) kept++;
    }
    // A Kafka batch is one unit of Kafka's format (one CRC, one codec): it stays whole while any
    // of its records does, and goes when none does.
    if (kafka && kept > 0) kept = count;
    out.removed += count - kept;
    if (writer === null || kept === 0) return;
    if (kept === count) {
      writer.copyBatch(buf, at, at + size);
      return;
    }
    for (let i = 0; i < count; ) {
      if (keep[i] === 0) {
        i++;
        continue;
      }
      let j = i + 1;
      while (j < count && keep[j] === 1) j++;
      writer.writeRun(buf, at, positions, ends, i, j);
      i = j;
    }
  }
}

function corrupt(seg: Segment, position: number, why: string): DamageFound {
  return new DamageFound(seg.walPath, position, why);
}

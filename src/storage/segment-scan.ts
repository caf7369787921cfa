/**
 * Reads a segment file batch by batch from a position, checking each batch fully (checkBatch:
 * magic, sizes, inner framing, CRC) and that base offsets follow on without a gap, and stops at
 * the first batch that fails, unless told to quarantine: then bad bytes followed by a good batch
 * become a damaged range of the segment and the scan goes on from that batch (docs/design.md,
 * recovery). Memory is bounded by the file: a size field is compared with the bytes left in the
 * file before anything is allocated for it.
 */
import type { FileHandle } from "node:fs/promises";
import { batchBaseOffset, batchCount, batchLastOffset } from "../format/batch-header.js";
import { HEADER_SIZE, KEY_SIZE_AT, PAYLOAD_SIZE_AT } from "../format/layout.js";
import { readU32 } from "../format/u64.js";
import {
  BatchStatus,
  batchStatusMessage,
  checkBatch,
  onlyKafkaBaseOffsetDiffers,
} from "../format/validate.js";
import { findNextBatch } from "./batch-search.js";
import { isDropped, type OffsetRange } from "./dropped-ranges.js";
import { readFully } from "./file-ops.js";
import { releaseScanBuffer, takeScanBuffer } from "./scan-buffers.js";
import type { Segment } from "./segment.js";

/** Why a scan stopped. */
export type ScanStop =
  /** Every byte up to the file's end is whole batches. */
  | "end"
  /** Zeros where the next batch would start: the unused, preallocated part of the file. */
  | "zero-tail"
  /** A batch whose header claims more bytes than the file holds: a write cut short. */
  | "torn"
  /** A batch that fails its checks. */
  | "corrupt"
  /** A whole batch whose base offset does not follow the previous batch. */
  | "offset-gap";

export interface ScanResult {
  /** The file position after the last good batch. */
  end: number;
  stop: ScanStop;
  /** For "corrupt" (and "torn"): what checkBatch said. */
  detail: string;
}

export interface ScanOptions {
  indexIntervalBytes: number;
  /** A compacted segment: base offsets need only increase, removed records leave gaps. */
  allowGaps?: boolean;
  /**
   * Quarantine bad bytes that a good batch follows (segment.markDamaged) instead of stopping there.
   * Zeros count as bad bytes too: a page lost in the middle of a file reads as zeros, and only
   * zeros (or garbage) that no good batch follows are the end of the data.
   */
  quarantine?: boolean;
  /** Offsets an operator dropped (dropped-ranges.ts): a gap they cover is no damage. */
  dropped?: readonly OffsetRange[];
}

const NONE_DROPPED: readonly OffsetRange[] = [];

/**
 * Scans `file` (of `fileSize` bytes) from `from`, where a batch with base offset `expectedOffset`
 * must start. Each good batch is passed to `segment.noteBatch`; `segment.size` is left alone. The
 * result's `end` is where the scan stopped: after the last good batch.
 */
export async function scanSegment(
  file: FileHandle,
  fileSize: number,
  segment: Segment,
  from: number,
  expectedOffset: number,
  options: ScanOptions,
): Promise<ScanResult> {
  const { indexIntervalBytes, allowGaps = false, quarantine = false, dropped = NONE_DROPPED } = options;
  const first = takeScanBuffer();
  try {
    return await scan(first);
  } finally {
    releaseScanBuffer(first);
  }

  /** The scan, reading into `first` (a larger buffer is allocated for a larger batch). */
  async function scan(first: Buffer): Promise<ScanResult> {
    let buf = first;
    let bufPos = from; // file position of buf[0]
    let bufLen = 0; // bytes of buf that hold file data
    let pos = from;
    let expected = expectedOffset;
    /** Size and record count of a batch whose base offset was not the one expected. */
    let wrongSize = 0;
    let wrongCount = 0;

    const fill = async (at: number, want: number): Promise<void> => {
      if (want > buf.length) buf = Buffer.allocUnsafe(want);
      bufLen = await readFully(file, buf, Math.min(buf.length, fileSize - at), at);
      bufPos = at;
    };

    while (pos < fileSize) {
      const stop = await check();
      if (stop === null) continue;
      if (!quarantine) return stop;
      if (stop.stop === "offset-gap" && !allowGaps) {
        // A whole, checked batch with the wrong base offset: the CRC leaves the base offset out, so
        // that field took the damage. Batches in a segment follow on, so its offsets are known.
        segment.markDamaged({
          position: pos,
          length: wrongSize,
          firstOffset: expected,
          lastOffset: expected + wrongCount - 1,
          reason: stop.detail,
        });
        pos += wrongSize;
        expected += wrongCount;
        continue;
      }
      // In a compacted segment a whole batch past the expected offset may itself be the next good one.
      const found = await findNextBatch(file, fileSize, stop.stop === "offset-gap" ? pos : pos + 1, expected);
      if (found === null) return stop;
      segment.markDamaged({
        position: pos,
        length: found.position - pos,
        firstOffset: expected,
        lastOffset: found.baseOffset - 1,
        reason: stop.stop === "zero-tail" ? "zeros where a batch should be" : stop.detail,
      });
      pos = found.position;
      expected = found.baseOffset;
      bufLen = 0;
    }
    return { end: pos, stop: "end", detail: "" };

    /** Checks the batch at `pos`: notes it and moves past it (null), or says why it is not good. */
    async function check(): Promise<ScanResult | null> {
      const left = fileSize - pos;
      if (pos + Math.min(HEADER_SIZE, left) > bufPos + bufLen) await fill(pos, HEADER_SIZE);
      let at = pos - bufPos;
      if (left < HEADER_SIZE || bufLen - at < HEADER_SIZE) {
        return stopAt(
          pos,
          isZero(buf, at, Math.min(left, bufLen - at)) ? "zero-tail" : "torn",
          BatchStatus.TRUNCATED,
        );
      }
      const claimed = HEADER_SIZE + readU32(buf, at + KEY_SIZE_AT) + readU32(buf, at + PAYLOAD_SIZE_AT);
      if (claimed > left) {
        return stopAt(pos, isZero(buf, at, HEADER_SIZE) ? "zero-tail" : "torn", BatchStatus.TRUNCATED);
      }
      if (at + claimed > bufLen) {
        await fill(pos, claimed);
        at = 0;
      }
      const size = checkBatch(buf, at, at + claimed, claimed);
      if (size === BatchStatus.BAD_OFFSET && onlyKafkaBaseOffsetDiffers(buf, at, at + claimed)) {
        // A stored Kafka batch whose Kafka base offset took the damage: like a wrong base offset.
        wrongSize = claimed;
        wrongCount = batchCount(buf, at);
        return {
          end: pos,
          stop: "offset-gap",
          detail: "the Kafka header's base offset differs from the batch's",
        };
      }
      if (size < 0) return stopAt(pos, isZero(buf, at, HEADER_SIZE) ? "zero-tail" : "corrupt", size);
      const base = batchBaseOffset(buf, at);
      const gap = base > expected && dropped.length > 0 && isDropped(dropped, expected, base - 1);
      if (allowGaps ? base < expected : base !== expected && !gap) {
        wrongSize = size;
        wrongCount = batchCount(buf, at);
        return {
          end: pos,
          stop: "offset-gap",
          detail: `expected base offset ${allowGaps ? "at least " : ""}${expected}, found ${base}`,
        };
      }
      segment.noteBatch(buf, at, pos, indexIntervalBytes);
      expected = batchLastOffset(buf, at) + 1;
      pos += size;
      return null;
    }
  }
}

function stopAt(end: number, stop: ScanStop, status: number): ScanResult {
  return { end, stop, detail: stop === "zero-tail" ? "" : batchStatusMessage(status) };
}

function isZero(buf: Uint8Array, at: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (buf[at + i] !== 0) return false;
  return true;
}

/**
 * Reads a segment file batch by batch from a position, checking each batch fully (checkBatch:
 * magic, sizes, inner framing, CRC) and that base offsets follow on without a gap, and stops at
 * the first batch that fails. Memory is bounded by the file: a size field is compared with the
 * bytes left in the file before anything is allocated for it.
 */
import type { FileHandle } from "node:fs/promises";
import { batchBaseOffset, batchLastOffset } from "../format/batch-header.js";
import { HEADER_SIZE, KEY_SIZE_AT, PAYLOAD_SIZE_AT } from "../format/layout.js";
import { readU32 } from "../format/u64.js";
import { BatchStatus, batchStatusMessage, checkBatch } from "../format/validate.js";
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

const CHUNK_BYTES = 1024 * 1024;

/**
 * Scans `file` (of `fileSize` bytes) from `from`, where a batch with base offset `expectedOffset`
 * must start. Each good batch is passed to `segment.noteBatch`; `segment.size` is left alone.
 * With `allowGaps` (a compacted segment) base offsets need only increase: removed records leave gaps.
 */
export async function scanSegment(
  file: FileHandle,
  fileSize: number,
  segment: Segment,
  from: number,
  expectedOffset: number,
  indexIntervalBytes: number,
  allowGaps = false,
): Promise<ScanResult> {
  let buf = Buffer.allocUnsafe(Math.max(HEADER_SIZE, Math.min(CHUNK_BYTES, fileSize - from)));
  let bufPos = from; // file position of buf[0]
  let bufLen = 0; // bytes of buf that hold file data
  let pos = from;
  let expected = expectedOffset;

  const fill = async (at: number, want: number): Promise<void> => {
    if (want > buf.length) buf = Buffer.allocUnsafe(want);
    const len = Math.min(buf.length, fileSize - at);
    let done = 0;
    while (done < len) {
      const { bytesRead } = await file.read(buf, done, len - done, at + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    bufPos = at;
    bufLen = done;
  };

  while (pos < fileSize) {
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
    if (size < 0) return stopAt(pos, isZero(buf, at, HEADER_SIZE) ? "zero-tail" : "corrupt", size);
    const base = batchBaseOffset(buf, at);
    if (allowGaps ? base < expected : base !== expected) {
      return {
        end: pos,
        stop: "offset-gap",
        detail: `expected base offset ${allowGaps ? "at least " : ""}${expected}, found ${base}`,
      };
    }
    segment.noteBatch(buf, at, pos, indexIntervalBytes);
    expected = batchLastOffset(buf, at) + 1;
    pos += size;
  }
  return { end: pos, stop: "end", detail: "" };
}

function stopAt(end: number, stop: ScanStop, status: number): ScanResult {
  return { end, stop, detail: stop === "zero-tail" ? "" : batchStatusMessage(status) };
}

function isZero(buf: Uint8Array, at: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (buf[at + i] !== 0) return false;
  return true;
}

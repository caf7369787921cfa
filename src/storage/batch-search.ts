/**
 * Finding the next good batch after damage: the first position at or after `from` holding a batch
 * that passes checkBatch (magic, sizes, framing, CRC32C) with a base offset at or past the one
 * expected. A false match would need a random CRC to agree. Size fields are compared with the bytes
 * left in the file before anything is allocated for them.
 */
import type { FileHandle } from "node:fs/promises";
import { batchBaseOffset } from "../format/batch-header.js";
import { BATCH_META_SIZE, HEADER_SIZE, KEY_SIZE_AT, MAGIC, PAYLOAD_SIZE_AT } from "../format/layout.js";
import { readU32 } from "../format/u64.js";
import { checkBatch } from "../format/validate.js";
import { readFully } from "./file-ops.js";
import { releaseScanBuffer, takeScanBuffer } from "./scan-buffers.js";

export interface FoundBatch {
  position: number;
  baseOffset: number;
}

/** The next good batch in `file` at or after `from` whose base offset is >= `minOffset`, or null. */
export async function findNextBatch(
  file: FileHandle,
  fileSize: number,
  from: number,
  minOffset: number,
): Promise<FoundBatch | null> {
  const window = takeScanBuffer();
  try {
    return await search(window, file, fileSize, from, minOffset);
  } finally {
    releaseScanBuffer(window);
  }
}

async function search(
  window: Buffer,
  file: FileHandle,
  fileSize: number,
  from: number,
  minOffset: number,
): Promise<FoundBatch | null> {
  let start = from;
  while (start < fileSize) {
    const len = await readFully(file, window, Math.min(window.length, fileSize - start), start);
    if (len === 0) return null;
    for (let i = window.indexOf(MAGIC, 0); i >= 0 && i < len; i = window.indexOf(MAGIC, i + 1)) {
      const position = start + i;
      if (fileSize - position < HEADER_SIZE) return null;
      // A header cut by the window's end is read again as the start of the next window.
      if (i + HEADER_SIZE > len) break;
      if (readU32(window, i + KEY_SIZE_AT) !== BATCH_META_SIZE) continue;
      const size = HEADER_SIZE + BATCH_META_SIZE + readU32(window, i + PAYLOAD_SIZE_AT);
      if (size > fileSize - position) continue;
      let buf = window;
      let at = i;
      if (i + size > len) {
        buf = Buffer.allocUnsafe(size);
        at = 0;
        if ((await readFully(file, buf, size, position)) < size) continue;
      }
      if (checkBatch(buf, at, at + size, size) === size && batchBaseOffset(buf, at) >= minOffset) {
        return { position, baseOffset: batchBaseOffset(buf, at) };
      }
    }
    if (start + len >= fileSize) return null;
    // Overlap by a header so that a batch starting near the window's end is not missed.
    start += Math.max(1, len - HEADER_SIZE + 1);
  }
  return null;
}

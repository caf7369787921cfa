/**
 * CRC32C (Castagnoli, as @node-rs/crc32 computes it) of a short byte range, in JavaScript. A call
 * into the native library costs about 300 ns before it reads a byte, which is most of the checksum
 * of a one-record batch (6b's shape: every batch a partition of its own, about 170 bytes); the
 * table walk below reads a range in place, with no view made, and beats the native call below a few
 * hundred bytes (docs/performance/scale.md, "Workload 6b: per-batch costs"). Longer ranges go to the
 * native code, which uses the CPU's crc32 instruction.
 */

/** Slicing-by-8 tables: TABLES[k * 256 + b] is the CRC of byte b followed by k zero bytes. */
const TABLES = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let c = b;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  TABLES[b] = c;
}
for (let b = 0; b < 256; b++) {
  for (let k = 1; k < 8; k++) {
    const prev = TABLES[(k - 1) * 256 + b]!;
    TABLES[k * 256 + b] = (prev >>> 8) ^ TABLES[prev & 0xff]!;
  }
}

/** The running state of a checksum before its first byte (`shortCrc32cEnd` turns it into the CRC). */
export const CRC32C_START = -1;

/**
 * Feeds buf[from, to) into the running state `crc` (CRC32C_START for a new checksum) and returns the
 * new state. Chained calls checksum several ranges as one.
 */
export function shortCrc32cUpdate(buf: Uint8Array, from: number, to: number, crc: number): number {
  const t = TABLES;
  let i = from;
  for (; i + 8 <= to; i += 8) {
    const a = (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24)) ^ crc;
    crc =
      t[1792 + (a & 0xff)]! ^
      t[1536 + ((a >>> 8) & 0xff)]! ^
      t[1280 + ((a >>> 16) & 0xff)]! ^
      t[1024 + (a >>> 24)]! ^
      t[768 + buf[i + 4]!]! ^
      t[512 + buf[i + 5]!]! ^
      t[256 + buf[i + 6]!]! ^
      t[buf[i + 7]!]!;
  }
  for (; i < to; i++) crc = t[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return crc;
}

/** The CRC32C (an unsigned 32-bit number) of the ranges fed into the running state `crc`. */
export function shortCrc32cEnd(crc: number): number {
  return ~crc >>> 0;
}

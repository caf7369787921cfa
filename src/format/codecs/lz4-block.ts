/**
 * Decodes one LZ4 block (the sequence format inside LZ4 frames) into `out`, checking every length
 * and match offset against the input and the output limit: a hostile block can neither read nor
 * write outside its buffers, and cannot make the output grow past the limit. Written here rather
 * than taken from the native package because the bound and the errors must be exact.
 */

/** `decodeLz4Block` results below 0. */
export const LZ4_CORRUPT = -1;
export const LZ4_OUTPUT_FULL = -2;

/**
 * Decodes src[ip, ipEnd) to out[op, ...) writing no byte at or past `limit` (<= out.length), with
 * matches allowed to reach back to `lowest` (the block's start for independent blocks, else the
 * output's). Returns the new output position, LZ4_OUTPUT_FULL when the data would pass `limit`,
 * or LZ4_CORRUPT.
 */
export function decodeLz4Block(
  src: Uint8Array,
  ip: number,
  ipEnd: number,
  out: Uint8Array,
  op: number,
  limit: number,
  lowest: number,
): number {
  if (ip >= ipEnd) return LZ4_CORRUPT;
  for (;;) {
    const token = src[ip++]!;
    let literals = token >>> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (ip >= ipEnd) return LZ4_CORRUPT;
        b = src[ip++]!;
        literals += b;
      } while (b === 255);
    }
    if (literals > ipEnd - ip) return LZ4_CORRUPT;
    if (literals > limit - op) return LZ4_OUTPUT_FULL;
    if (literals > 16) {
      out.set(src.subarray(ip, ip + literals), op);
    } else {
      for (let i = 0; i < literals; i++) out[op + i] = src[ip + i]!;
    }
    ip += literals;
    op += literals;
    // The last sequence has literals only.
    if (ip === ipEnd) return op;
    if (ipEnd - ip < 2) return LZ4_CORRUPT;
    const offset = src[ip]! | (src[ip + 1]! << 8);
    ip += 2;
    if (offset === 0 || offset > op - lowest) return LZ4_CORRUPT;
    let length = token & 15;
    if (length === 15) {
      let b: number;
      do {
        if (ip >= ipEnd) return LZ4_CORRUPT;
        b = src[ip++]!;
        length += b;
      } while (b === 255);
    }
    length += 4;
    if (length > limit - op) return LZ4_OUTPUT_FULL;
    let from = op - offset;
    if (offset >= length) {
      if (length > 16) out.copyWithin(op, from, from + length);
      else for (let i = 0; i < length; i++) out[op + i] = out[from + i]!;
      op += length;
    } else {
      // Overlapping: the match repeats bytes it is writing, so it is copied forward byte by byte.
      const end = op + length;
      while (op < end) out[op++] = out[from++]!;
    }
  }
}

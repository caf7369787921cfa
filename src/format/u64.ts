/**
 * u64 fields as JavaScript numbers, without BigInt: `hi * 2^32 + lo`.
 * Offsets stay below 2^53; readers that must reject larger values check `readU64Safe`.
 */

const TWO_32 = 0x1_0000_0000;

/** Reads a big-endian u64 as a number; exact below 2^53, approximate above. */
export function readU64(buf: Uint8Array, at: number): number {
  const hi = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
  const lo = ((buf[at + 4]! << 24) | (buf[at + 5]! << 16) | (buf[at + 6]! << 8) | buf[at + 7]!) >>> 0;
  return hi * TWO_32 + lo;
}

/** Reads a big-endian u64, returning -1 when it does not fit in 53 bits. */
export function readU64Safe(buf: Uint8Array, at: number): number {
  const hi = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
  if (hi > 0x1fffff) return -1;
  const lo = ((buf[at + 4]! << 24) | (buf[at + 5]! << 16) | (buf[at + 6]! << 8) | buf[at + 7]!) >>> 0;
  return hi * TWO_32 + lo;
}

/** Writes a non-negative integer below 2^53 as a big-endian u64. */
export function writeU64(buf: Uint8Array, at: number, value: number): void {
  const hi = Math.floor(value / TWO_32);
  const lo = value - hi * TWO_32;
  writeU32(buf, at, hi);
  writeU32(buf, at + 4, lo);
}

export function readU32(buf: Uint8Array, at: number): number {
  return ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
}

export function writeU32(buf: Uint8Array, at: number, value: number): void {
  buf[at] = value >>> 24;
  buf[at + 1] = value >>> 16;
  buf[at + 2] = value >>> 8;
  buf[at + 3] = value;
}

export function readU16(buf: Uint8Array, at: number): number {
  return (buf[at]! << 8) | buf[at + 1]!;
}

export function writeU16(buf: Uint8Array, at: number, value: number): void {
  buf[at] = value >>> 8;
  buf[at + 1] = value;
}

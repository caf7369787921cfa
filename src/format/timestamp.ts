/**
 * Record timestamps are u64 nanoseconds since the Unix epoch; the API speaks milliseconds.
 * These conversions are exact for integer milliseconds and use no BigInt.
 */
import { readU32, writeU32 } from "./u64.js";

const TWO_16 = 0x1_0000;
const NS_PER_MS = 1_000_000;

/**
 * Writes `ms` (a non-negative integer number of milliseconds, below 2^42) as u64 nanoseconds.
 * ms * 10^6 can exceed 2^53, so the product is formed in 16-bit limbs: ms = a * 2^16 + b, and
 * both a * 10^6 and b * 10^6 are exact doubles.
 */
export function writeTimestampMs(buf: Uint8Array, at: number, ms: number): void {
  const a = Math.floor(ms / TWO_16);
  const b = ms - a * TWO_16;
  const low = b * NS_PER_MS; // < 2^36
  const carry = Math.floor(low / TWO_16);
  const high = a * NS_PER_MS + carry; // ns = high * 2^16 + (low mod 2^16)
  const hi = Math.floor(high / TWO_16);
  const lo = (high - hi * TWO_16) * TWO_16 + (low - carry * TWO_16);
  writeU32(buf, at, hi);
  writeU32(buf, at + 4, lo);
}

/**
 * Reads u64 nanoseconds as milliseconds: an exact integer when the nanoseconds are a whole number of
 * milliseconds, else with the sub-millisecond part as a fraction. hi * 2^32 / 10^6 is split as
 * hi * 4294 + hi * 967296 / 10^6 so that every intermediate stays an exact double.
 */
export function readTimestampMs(buf: Uint8Array, at: number): number {
  const hi = readU32(buf, at);
  const lo = readU32(buf, at + 4);
  const r = hi * 967_296 + lo; // < 2^53
  const whole = Math.floor(r / NS_PER_MS);
  const rest = r - whole * NS_PER_MS;
  const ms = hi * 4294 + whole;
  return rest === 0 ? ms : ms + rest / NS_PER_MS;
}

/**
 * Compares two u64 timestamps stored in buffers: negative, zero or positive like a comparator.
 */
export function compareTimestamps(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number): number {
  const d = readU32(a, aAt) - readU32(b, bAt);
  if (d !== 0) return d;
  return readU32(a, aAt + 4) - readU32(b, bAt + 4);
}

/**
 * Unsigned and zigzag varints as Kafka writes them (protobuf's encoding), over numbers: exact for
 * magnitudes below 2^53 (uvarint) and 2^52 (zigzag), which covers every length, count, delta and
 * timestamp delta that occurs. Shared by the writer and the record batch builder.
 */

/** Bytes of `v` as an unsigned varint (0 <= v < 2^53). */
export function uvarintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** The zigzag form of a signed value: 0, -1, 1, -2 ... become 0, 1, 2, 3 ... */
export function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

/** Writes `v` as an unsigned varint at buf[at]; returns the position after it. */
export function writeUVarintAt(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[at++] = v;
  return at;
}

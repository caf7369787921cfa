/** UTF-8 bytes of a string, length of bytes, or -1 for anything else: a message field's size. */
export function byteLength(v: unknown): number {
  if (typeof v === "string") return Buffer.byteLength(v);
  if (v instanceof Uint8Array) return v.length;
  return -1;
}

/**
 * How several buffers meant for one socket go out. A corked `socket.write` per buffer becomes one
 * writev, but Node's stream pays for it in objects: an entry per buffered write, then an array, a
 * callback and a write request for the writev. Up to JOIN_MAX_BYTES in all, one buffer costs less
 * (a copy of a few kilobytes is well under a microsecond): the client joins what one operation
 * issued (`joinBuffers`), and the broker encodes a small fetch reply whole. Past it, copying would
 * cost more than the bookkeeping it saves, and the buffers go out corked.
 */
export const JOIN_MAX_BYTES = 16 * 1024;

/** buffers[0, count) copied into one buffer of `total` bytes. */
export function joinBuffers(buffers: readonly Buffer[], count: number, total: number): Buffer {
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < count; i++) at += buffers[i]!.copy(out, at);
  return out;
}

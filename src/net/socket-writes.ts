/**
 * How several buffers meant for one socket go out. A corked `socket.write` per buffer becomes one
 * writev, but Node's stream pays for it in objects: an entry per buffered write, then an array, a
 * callback and a write request for the writev. Up to JOIN_MAX_BYTES in all, one buffer costs less
 * (a copy of a few kilobytes is well under a microsecond): the client joins what one operation
 * issued (`joinBuffers`), and the broker encodes a small fetch reply whole. Past it, copying would
 * cost more than the bookkeeping it saves, and the buffers go out corked.
 */
import type { Writable } from "node:stream";
import { isLentReadBuffer, releaseReadBuffer } from "../format/read-buffers.js";

export const JOIN_MAX_BYTES = 16 * 1024;

/** buffers[0, count) copied into one buffer of `total` bytes. */
export function joinBuffers(buffers: readonly Buffer[], count: number, total: number): Buffer {
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < count; i++) at += buffers[i]!.copy(out, at);
  return out;
}

/**
 * Writes `reply` (one buffer, or a large response's parts corked into one writev). Read buffers
 * lent by the log (format/read-buffers.ts) among them are handed back once the socket is done
 * with them: in the callback of the reply's last write, which Node calls only after every earlier
 * write of the socket ended (written to the kernel, or failed when the socket was destroyed).
 */
export function writeReply(socket: Writable, reply: Buffer | readonly Buffer[]): void {
  if (!isBufferList(reply)) {
    if (isLentReadBuffer(reply)) socket.write(reply, () => releaseReadBuffer(reply));
    else socket.write(reply);
    return;
  }
  let last = -1;
  let lent = false;
  for (let i = 0; i < reply.length; i++) {
    const b = reply[i]!;
    if (b.length > 0) last = i;
    if (!lent && isLentReadBuffer(b)) lent = true;
  }
  if (last < 0) return;
  socket.cork();
  for (let i = 0; i < last; i++) if (reply[i]!.length > 0) socket.write(reply[i]!);
  // One callback per response, and only for one that holds read buffers.
  if (lent) socket.write(reply[last]!, () => releaseAll(reply));
  else socket.write(reply[last]!);
  socket.uncork();
}

/** Hands back the read buffers among `buffers` (nothing else refers to them any more). */
export function releaseAll(buffers: Buffer | readonly Buffer[]): void {
  if (!isBufferList(buffers)) releaseReadBuffer(buffers);
  else for (const b of buffers) releaseReadBuffer(b);
}

export function isBufferList(reply: Buffer | readonly Buffer[]): reply is readonly Buffer[] {
  return Array.isArray(reply);
}

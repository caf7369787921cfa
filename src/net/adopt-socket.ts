/**
 * Gives an accepted connection net's `onread` reading (see net/socket-reads.ts), which
 * `net.Server` offers only to sockets that connect out.
 *
 * The server accepts with `pauseOnConnect`, so nothing has been read yet; the accepted socket's
 * handle is moved into a new socket made with `onread`, and the empty shell is destroyed, which
 * releases the server's count of it and nothing else (it no longer has a handle to close). When
 * the handle is not where this expects it (another Node version), the accepted socket is used as
 * it is, reading through 'data' events: slower, never wrong.
 */
import { Socket } from "node:net";
import type { SocketReads } from "./socket-reads.js";

interface HandleHolder {
  _handle?: object | null;
}

/** The socket to serve the connection on, and whether it reads through `reads`. */
export function adoptSocket(accepted: Socket, reads: SocketReads): { socket: Socket; onread: boolean } {
  const holder = accepted as unknown as HandleHolder;
  const handle = holder._handle;
  if (handle === null || handle === undefined || accepted.destroyed) {
    accepted.resume();
    return { socket: accepted, onread: false };
  }
  holder._handle = null;
  accepted.destroy();
  const options = { handle, onread: reads.onread, allowHalfOpen: true, readable: true, writable: true };
  return { socket: new Socket(options as ConstructorParameters<typeof Socket>[0]), onread: true };
}

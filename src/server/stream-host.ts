/**
 * What a connection offers the fetch streams opened on it (fetch-stream.ts): a way to push a
 * response outside the request/response accounting, a check that the connection has room for it,
 * a wake-up once it has room again, and the table of its open streams by id (for credit and cancel).
 */
import type { Reply } from "./handler.js";

/** A stream as its connection knows it. */
export interface OpenStream {
  /** The client read `bytes` of the records it was sent. */
  credit(bytes: number): void;
  /** The client cancelled: stop at once, answer nothing more. */
  cancel(): void;
  /** The connection has room again after `StreamHost.waitForRoom`. */
  roomAvailable(): void;
}

export interface StreamHost {
  /** Open streams by id (the FetchStream request's correlation id). */
  readonly streams: Map<number, OpenStream>;
  /** Writes a stream's response now. */
  push(reply: Reply): void;
  /** The most a round may read now (less while the server's response budget is full). */
  fetchBytes(): number;
  /** Whether the responses the connection holds are under its in-flight bound. */
  hasRoom(): boolean;
  /** Calls `stream.roomAvailable()` once, when the connection has room again. */
  waitForRoom(stream: OpenStream): void;
}

/**
 * A protocol's side of one connection, above the transport (framed-connection.ts): the native
 * protocol's NativeSession, later the Kafka protocol's. The transport hands it whole frames in
 * arrival order and knows nothing of what is in them; the session decodes, dispatches, reports the
 * cost of each request it starts (`FramedConnection.begin`) and hands back what to write when it
 * completes (`finish`), which may be nothing (Kafka's acks=0). Whether responses go out in request
 * order (Kafka) or as they complete (the native protocol, by correlation id) is the session's
 * business: the transport writes what it is given, when it is given.
 */
import type { ConchError } from "../format/errors.js";
import type { FramedConnection } from "./framed-connection.js";

export interface Session {
  /**
   * A whole frame. `borrowed`: the frame is a view of the listener's shared scratch buffer, which
   * the next read overwrites, so what is kept past this call must be copied. Returns true when
   * nothing refers to the frame's memory any more, which then serves a later frame (FramePool).
   */
  frame(frame: Buffer, borrowed: boolean): boolean;
  /**
   * Whether `frame` asks for a response as large as maxFetchBytes (a fetch): such a request waits,
   * its frame held and reading paused, while the broker-wide ResponseBudget is full.
   */
  needsResponseRoom(frame: Buffer): boolean;
  /**
   * The connection is over a connection limit: answer `frame`, its first, with `err`. The transport
   * then takes no more frames and closes once every request is answered.
   */
  refuse(frame: Buffer, err: ConchError): void;
  /** Whether an idle connection may be closed: false until the session is set up (a handshake). */
  readonly idleCloses: boolean;
  /** End the waits in flight at once (long polls): the client ended, or the server stops. */
  abort(reason: ConchError): void;
  /** The socket closed: nothing more is written; release what the session holds. */
  closed(): void;
}

/** Told once when its connection has room for responses again (FramedConnection.waitForRoom). */
export interface RoomWaiter {
  roomAvailable(): void;
}

/** Makes a listener's session for each connection it accepts. */
export type SessionFactory = (connection: FramedConnection) => Session;

/**
 * One connection's transport: bytes in, frames to its Session, responses out. It knows frames only
 * as a 4-byte big-endian size and a body (the native and the Kafka protocols alike), and nothing of
 * what they hold.
 *
 * - Frames are handed to the session one by one in arrival order.
 * - Backpressure: bytes of requests in flight (what the session reports to `begin`; each request
 *   counts at least MIN_REQUEST_COST) and bytes of responses the socket still holds are bounded by
 *   `maxInflightBytes`. Over it, the connection stops taking frames from its parser and pauses
 *   the socket, so a client that sends faster than it reads is throttled by TCP instead of growing
 *   the broker's memory. It resumes when a request completes or the socket drains. Requests in
 *   flight are also capped at MAX_INFLIGHT_REQUESTS: at the cap, frames wait in the parser (counted
 *   in the byte bound) until one completes, so no client can park an unbounded number of long polls.
 * - Across connections, the same bytes are charged to the broker's ResponseBudget: over its bound,
 *   a frame the session says needs response room waits (its frame held, reading paused) until the
 *   total drains, unless this connection holds nothing; the session then cuts its answer to
 *   MIN_FETCH_BYTES (`responseCap`).
 * - Timeouts, checked by the transport's ConnectionSweep: no request for `idleTimeoutMs` with
 *   nothing in flight ends the connection (once the session allows it); a frame begun and not
 *   finished within `frameTimeoutMs` drops it (a client trickling bytes holds no slot).
 * - A framing error (a size over the maximum) closes the connection at once.
 * - When the client ends or the socket closes, the session is told to abort its waits, so its long
 *   polls end at once instead of holding a dead connection for their full wait.
 * - Reads go through `SocketReads` when the socket was made with it (adopt-socket.ts): a large
 *   frame is read straight into its own buffer, and frames the session is done with go back to the
 *   FramePool. Small frames are handed over as views of the shared scratch buffer they were read
 *   into (`borrowed`); what a read leaves unhandled is copied out. Other sockets (TLS, which
 *   cannot use net's `onread`) read through 'data' events.
 */
import type { X509Certificate } from "node:crypto";
import type { Socket } from "node:net";
import { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isLentReadBuffer } from "../format/read-buffers.js";
import { type CoarseClock, ConnectionActivity } from "./connection-activity.js";
import { FrameParser } from "./frame-parser.js";
import type { FramePool } from "./frame-pool.js";
import { GATHER_MAX_REPLY_BYTES, ReplyGather } from "./reply-gather.js";
import type { BudgetWaiter, ResponseBudget } from "./response-budget.js";
import type { RoomWaiter, Session, SessionFactory } from "./session.js";
import type { SocketReads } from "./socket-reads.js";
import { isBufferList, releaseAll, writeReply } from "./socket-writes.js";
import {
  MAX_INFLIGHT_REQUESTS,
  MIN_FETCH_BYTES,
  MIN_REQUEST_COST,
  type TransportLimits,
} from "./transport-limits.js";

/** The levels a rate-limited line may have. */
export type LimitedLevel = "info" | "warn" | "error";

/** Logs a line of a kind bad clients can repeat at will, at most one per interval (LogLimiter). */
export interface LineLimiter {
  log(logger: Logger, level: LimitedLevel, key: string, fields: object, msg: string): void;
}

/** What a connection is given by its listener. */
export interface FramedConnectionDeps {
  limits: TransportLimits;
  /** Already carries the listener's fields; the connection adds its id and remote address. */
  logger: Logger;
  openSession: SessionFactory;
  /** Set when the connection is over a limit: its first frame is refused, then it closes. */
  refusal: ConchError | null;
  /** Reads through net's `onread` (adopt-socket.ts); null reads through 'data' events. */
  reads: SocketReads | null;
  pool: FramePool | null;
  /** The bound on response bytes of all connections. */
  budget: ResponseBudget;
  /** A coarse clock (ConnectionSweep.now); the timeouts are checked against it. */
  clock: CoarseClock;
  /** Shared by all connections, so a thousand bad clients cost a line, not a thousand. */
  lines: LineLimiter;
}

export class FramedConnection implements BudgetWaiter {
  readonly id: number;
  readonly remote: string;
  /** The client's IP address (for the failure limiter and the connection limits). */
  readonly remoteAddress: string;
  readonly logger: Logger;
  readonly closed: Promise<void>;
  #socket: Socket;
  #parser: FrameParser;
  #pool: FramePool | null;
  #limits: TransportLimits;
  #session: Session;
  /** Set when the connection is over the limit: its first frame is refused, then it closes. */
  #refusal: ConchError | null;
  /** Requests started and not yet finished, and the bytes they count against the bound. */
  #inflight = 0;
  #inflightBytes = 0;
  /** False once no more frames are taken: the client ended, the server stops, or a refusal. */
  #reading = true;
  #paused = false;
  #closing = false;
  #closed = false;
  #budget: ResponseBudget;
  /** What this connection has charged to the budget: #inflightBytes + writableLength when last seen. */
  #charged = 0;
  /** A frame that needs response room, taken while the budget was full; handled once it has room. */
  #held: Buffer | null = null;
  #activity: ConnectionActivity;
  #lines: LineLimiter;
  #roomWaiters: RoomWaiter[] = [];
  /** Set while a quota throttles the connection: no frame is taken until it fires. */
  #throttle: NodeJS.Timeout | null = null;
  #throttledUntil = 0;
  /** Small responses, written together once per turn (reply-gather.ts). */
  readonly #gather: ReplyGather;

  constructor(id: number, socket: Socket, deps: FramedConnectionDeps) {
    const { limits, pool, reads } = deps;
    this.id = id;
    this.#socket = socket;
    this.#gather = new ReplyGather(socket, () => this.#syncCharge());
    this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    this.remoteAddress = socket.remoteAddress ?? "";
    this.#limits = limits;
    this.logger = deps.logger.child({ conn: id, remote: this.remote });
    this.#refusal = deps.refusal;
    this.#pool = pool;
    this.#budget = deps.budget;
    this.#activity = new ConnectionActivity(deps.clock);
    this.#lines = deps.lines;
    this.#parser = new FrameParser(
      pool === null ? { maxFrameBytes: limits.maxFrameBytes } : { maxFrameBytes: limits.maxFrameBytes, pool },
    );
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));

    socket.setNoDelay(true);
    if (reads !== null) {
      reads.parser = this.#parser;
      reads.onRead = () => {
        if (this.#reading) this.#pump();
      };
      reads.onFailure = (err) => this.#framingFailed(err);
    }
    // Without `reads` the socket reads through 'data' events; with them, none is emitted.
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("drain", () => {
      this.#syncCharge();
      this.#wakeRoomWaiters();
      this.#pump();
    });
    socket.on("end", () => this.#onEnd());
    socket.on("error", (err) => this.logger.debug({ err }, "socket error"));
    socket.on("close", () => this.#onClose());
    this.#session = deps.openSession(this);
  }

  /**
   * A quota throttles the connection (Kafka's muted channel): no request is read for `ms` from
   * now (or longer, if already throttled longer). Requests in flight go on.
   */
  throttle(ms: number): void {
    if (ms <= 0 || this.#closed) return;
    const until = performance.now() + ms;
    if (until <= this.#throttledUntil) return;
    this.#throttledUntil = until;
    if (this.#throttle !== null) clearTimeout(this.#throttle);
    this.#throttle = setTimeout(() => {
      this.#throttle = null;
      this.#throttledUntil = 0;
      this.#pump();
    }, ms);
    this.#setPaused(true);
  }

  /** Whether the connection is TLS. */
  get encrypted(): boolean {
    return this.#socket instanceof TLSSocket;
  }

  /** The client certificate of a TLS connection, when the listener's CA verified it; else null. */
  verifiedPeerCertificate(): X509Certificate | null {
    const socket = this.#socket;
    if (!(socket instanceof TLSSocket) || !socket.authorized) return null;
    return socket.getPeerX509Certificate() ?? null;
  }

  /** Requests in flight. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Bytes counted against the in-flight bound: requests in progress plus unsent responses. */
  get pendingBytes(): number {
    return this.#inflightBytes + this.#socket.writableLength + this.#gather.bytes;
  }

  /** Whether reading is paused by backpressure. */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Stops taking frames, wakes the waits in flight, and closes once every request is answered.
   * Resolves when the socket has closed.
   */
  shutdown(): Promise<void> {
    this.#stopReading();
    this.#session.abort(new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down"));
    this.#endWhenIdle();
    return this.closed;
  }

  /** Takes no more frames and closes once every request in flight is finished. */
  closeWhenAnswered(): void {
    this.#stopReading();
    this.#endWhenIdle();
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.#socket.destroy();
  }

  /** A line of a kind that bad clients can repeat at will: at most one per interval. */
  limitedLog(level: LimitedLevel, key: string, fields: object, msg: string): void {
    this.#lines.log(this.logger, level, key, fields, msg);
  }

  /**
   * A request started: it counts `frameBytes` (at least MIN_REQUEST_COST) plus the response it may
   * answer with against the bounds until `finish` is called with the cost returned.
   */
  begin(frameBytes: number, responseBytes: number): number {
    const cost = Math.max(frameBytes, MIN_REQUEST_COST) + responseBytes;
    this.#inflight++;
    this.#inflightBytes += cost;
    this.#syncCharge();
    return cost;
  }

  /** A request begun at `cost` is finished: `reply` (null for none) is written, then it uncounts. */
  finish(cost: number, reply: Buffer | readonly Buffer[] | null): void {
    if (reply !== null) this.write(reply);
    this.#inflight--;
    this.#inflightBytes -= cost;
    this.#activity.answered();
    this.#syncCharge();
    this.#wakeRoomWaiters();
    if (this.#inflight === 0 && this.#closing) this.#endWhenIdle();
    else this.#pump();
  }

  /**
   * Writes a response. Several buffers go out corked, as one writev, never concatenated: they are
   * a large response's parts, too large to copy (a small one comes as one buffer, see
   * socket-writes.ts). write()'s return value is reflected in writableLength, which the in-flight
   * bound counts; 'drain' resumes.
   */
  write(reply: Buffer | readonly Buffer[]): void {
    if (this.#closed) {
      // Never handed to the socket: its read buffers serve the next reads.
      releaseAll(reply);
      return;
    }
    // A lent read buffer goes out through writeReply, which hands it back when written.
    if (!isBufferList(reply) && reply.length <= GATHER_MAX_REPLY_BYTES && !isLentReadBuffer(reply)) {
      this.#gather.add(reply);
      this.#syncCharge();
      return;
    }
    this.#gather.flush();
    writeReply(this.#socket, reply);
    this.#syncCharge();
  }

  /** Whether requests in flight and unsent responses are under the bounds. */
  hasRoom(): boolean {
    const pending = this.pendingBytes;
    if (pending > this.#limits.maxInflightBytes) return false;
    return pending === 0 || this.#budget.hasRoom();
  }

  /**
   * The most a large response (a fetch) may hold now: `max`, or MIN_FETCH_BYTES while the budget
   * is full (it was let through because this connection held nothing).
   */
  responseCap(max: number): number {
    return this.#budget.hasRoom() ? max : MIN_FETCH_BYTES;
  }

  /** `waiter.roomAvailable()` is called once, when the connection is under its bounds again. */
  waitForRoom(waiter: RoomWaiter): void {
    this.#roomWaiters.push(waiter);
    // The connection's own bound is watched through 'drain'; the budget wakes it otherwise.
    this.#budget.wait(this);
  }

  /** The budget has room again (BudgetWaiter). */
  budgetAvailable(): void {
    if (this.#closed) return;
    this.#wakeRoomWaiters();
    this.#pump();
    // Others woken first may have taken the room again: still waiting, wait again.
    if (this.#roomWaiters.length > 0 && !this.#closed) this.#budget.wait(this);
  }

  /** From the sweep: ends an idle connection, drops one stuck mid-frame. */
  checkTimeouts(now: number): void {
    if (this.#closed || !this.#reading || this.#refusal !== null) return;
    const midFrame = this.#parser.midFrame;
    // Frames we hold back (backpressure, the request cap, the budget) are not the client's delay.
    const arriving =
      midFrame && !this.#paused && this.#held === null && this.#inflight < MAX_INFLIGHT_REQUESTS;
    if (this.#activity.stalled(now, arriving, this.#limits.frameTimeoutMs)) {
      this.limitedLog(
        "info",
        "stalled",
        {},
        `closing the connection: a frame unfinished after ${this.#limits.frameTimeoutMs} ms`,
      );
      this.#socket.destroy();
      return;
    }
    if (
      this.#session.idleCloses &&
      !midFrame &&
      this.#inflight === 0 &&
      this.#activity.idleFor(now) >= this.#limits.idleTimeoutMs
    ) {
      this.limitedLog(
        "info",
        "idle",
        {},
        `closing the connection: idle for ${this.#limits.idleTimeoutMs} ms`,
      );
      this.closeWhenAnswered();
    }
  }

  #onData(chunk: Buffer): void {
    if (!this.#reading) return;
    this.#parser.push(chunk);
    this.#pump();
  }

  /** Takes frames from the parser and hands them to the session while under the bounds. */
  #pump(): void {
    if (this.#held !== null) {
      if (!this.#responseFits()) {
        this.#budget.wait(this);
        return;
      }
      const held = this.#held;
      this.#held = null;
      if (this.#reading && !this.#closed) this.#handFrame(held, false);
    }
    // A request answered at once pumps again from inside #handFrame, and may hold a frame there.
    while (this.#reading && !this.#closed && this.#held === null) {
      if (this.#throttle !== null) {
        this.#setPaused(true);
        return;
      }
      if (this.#inflightBytes + this.#socket.writableLength > this.#limits.maxInflightBytes) {
        this.#setPaused(true);
        return;
      }
      if (this.#inflight >= MAX_INFLIGHT_REQUESTS) {
        // Frames wait in the parser. The socket keeps being read while they fit in the byte bound,
        // so a client that pipelines long polls and hangs up is noticed at once (a paused socket
        // never sees the FIN) and its waits end.
        const held = this.#inflightBytes + this.#socket.writableLength + this.#parser.bufferedBytes;
        this.#setPaused(held > this.#limits.maxInflightBytes);
        return;
      }
      let frame: Buffer | null;
      try {
        frame = this.#parser.next();
      } catch (err) {
        this.#framingFailed(err);
        return;
      }
      if (frame === null) break;
      const borrowed = this.#parser.lastFrameBorrowed;
      if (!this.#responseFits() && this.#session.needsResponseRoom(frame)) {
        // Held until the budget drains; a view of the shared scratch is copied first.
        this.#held = borrowed ? Buffer.from(frame) : frame;
        this.#budget.wait(this);
        this.#setPaused(true);
        return;
      }
      this.#handFrame(frame, borrowed);
    }
    if (this.#held === null) this.#setPaused(false);
  }

  /**
   * Whether a large response may start: the budget has room for the largest, or this connection
   * holds nothing (its answer is then cut, see responseCap).
   */
  #responseFits(): boolean {
    return this.pendingBytes === 0 || this.#budget.hasRoom();
  }

  #handFrame(frame: Buffer, borrowed: boolean): void {
    this.#activity.frameTaken();
    if (this.#refusal !== null) {
      this.#session.refuse(frame, this.#refusal);
      this.closeWhenAnswered();
      return;
    }
    // The session copied what it keeps: the frame's memory serves the next large request.
    if (this.#session.frame(frame, borrowed)) this.#pool?.give(frame);
  }

  #framingFailed(err: unknown): void {
    this.limitedLog("warn", "malformed", { err }, "closing the connection: frame over the maximum size");
    this.#socket.destroy();
  }

  #setPaused(paused: boolean): void {
    if (paused === this.#paused || this.#closed) return;
    this.#paused = paused;
    if (paused) {
      this.#socket.pause();
      this.logger.debug({ pendingBytes: this.pendingBytes }, "reading paused: responses pending");
    } else if (this.#reading) {
      this.#socket.resume();
    }
  }

  /** Brings this connection's charge to the budget up to date. */
  #syncCharge(): void {
    const now = this.#closed ? 0 : this.pendingBytes;
    if (now === this.#charged) return;
    const delta = now - this.#charged;
    this.#charged = now;
    this.#budget.change(delta);
  }

  #wakeRoomWaiters(): void {
    if (this.#roomWaiters.length === 0 || this.#closed || !this.hasRoom()) return;
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const waiter of waiters) waiter.roomAvailable();
  }

  /**
   * The client finished sending: answer what is in flight, then close. A FIN cannot tell a client
   * that only half-closed from one that is gone, so waits are woken too (they answer at once with
   * what they have) rather than holding the connection open for their full wait.
   */
  #onEnd(): void {
    if (this.#reading && this.#parser.midFrame) this.logger.debug("client ended mid frame");
    this.#stopReading();
    this.#session.abort(new ConchError(ErrorCode.CONNECTION_CLOSED, "the client ended the connection"));
    this.#endWhenIdle();
  }

  #stopReading(): void {
    if (!this.#reading) return;
    this.#reading = false;
    this.#paused = true;
    if (!this.#closed) this.#socket.pause();
  }

  /** Ends the socket (after its pending writes) once no request is in flight. */
  #endWhenIdle(): void {
    if (this.#closed) return;
    if (this.#inflight > 0) {
      this.#closing = true;
      return;
    }
    this.#closing = false;
    this.#gather.flush();
    // destroySoon: end our side after the pending writes, then close even if the client keeps its side open.
    this.#socket.destroySoon();
  }

  #onClose(): void {
    this.#closed = true;
    this.#gather.drop();
    if (this.#throttle !== null) clearTimeout(this.#throttle);
    this.#throttle = null;
    this.#reading = false;
    this.#session.closed();
    this.#roomWaiters = [];
    // Nothing of this connection stays charged or held.
    this.#held = null;
    this.#budget.cancel(this);
    this.#syncCharge();
    this.logger.debug({ inflight: this.#inflight }, "connection closed");
  }
}

/**
 * One client connection: frames in, responses out.
 *
 * - Requests are started one by one in arrival order; many may be in flight at once, and each is
 *   answered with its correlation id whenever it completes.
 * - The handshake comes first; any other request before it is answered HANDSHAKE_REQUIRED and the
 *   connection closed.
 * - Backpressure: bytes of requests in flight (plus the responses they may return; each request
 *   counts at least 4 KiB) and bytes of responses the socket still holds are bounded by
 *   `maxInflightBytes`. Over it, the connection stops taking frames from its parser and pauses
 *   the socket, so a client that sends faster than it reads is throttled by TCP instead of growing
 *   the broker's memory. It resumes when a request completes or the socket drains. Requests in
 *   flight are also capped at 1,000: at the cap, frames wait in the parser (counted in the byte
 *   bound) until one completes, so no client can park an unbounded number of long polls.
 * - Across connections, the same bytes are charged to the server's ResponseBudget: over its bound,
 *   a fetch waits (its frame held, reading paused) until the total drains, unless this connection
 *   holds nothing, which then fetches with maxBytes cut to MIN_FETCH_BYTES (response-budget.ts).
 * - Timeouts, checked by the server's ConnectionSweep: no request for `idleTimeoutMs` with nothing
 *   in flight (a long poll or a fetch stream is in flight) ends the connection; a frame begun and
 *   not finished within `frameTimeoutMs` drops it (a client trickling bytes holds no slot).
 * - Framing errors (a size over the maximum, a frame too short for a request header) close the
 *   connection at once; request errors are answered and the connection stays.
 * - When the client ends or the socket closes, the connection's signal aborts, so its long polls
 *   end at once instead of holding a dead connection for their full wait.
 * - Reads go through `SocketReads` when the socket was made with it (adopt-socket.ts): a large
 *   request is read straight into its frame, and frames of handlers that copy what they keep
 *   (`copiesFrame`, a produce) go back to the server's FramePool once the handler returns. Small
 *   requests are handled as views of the shared scratch buffer they were read into (copied first
 *   for handlers that do not copy what they keep); what a read leaves unhandled is copied out.
 */
import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { ApiKey, apiName } from "../protocol/api.js";
import { encodeErrorResponse } from "../protocol/error-response.js";
import {
  hasRequestHeader,
  requestApiKey,
  requestApiVersion,
  requestCorrelationId,
} from "../protocol/frame.js";
import { FrameParser } from "../protocol/frame-parser.js";
import type { FramePool } from "../protocol/frame-pool.js";
import type { SocketReads } from "../protocol/socket-reads.js";
import { type LimitedLevel, LogLimiter } from "../storage/log-limiter.js";
import { type CoarseClock, ConnectionActivity, SYSTEM_CLOCK } from "./connection-activity.js";
import { type Handled, type HandlerTable, type Reply, RequestContext } from "./handler.js";
import { ReplyTicket, type TicketOwner } from "./reply-ticket.js";
import type { BudgetWaiter, ResponseBudget } from "./response-budget.js";
import type { ServerLimits } from "./server-options.js";
import type { OpenStream, StreamHost } from "./stream-host.js";

/** Codes at or above this are client-side only and never sent. */
const FIRST_CLIENT_ONLY_CODE = 100;
/**
 * Requests a connection may have in flight at once, whatever their size. Without it, tiny
 * pipelined long polls (a few dozen bytes each, waiting for minutes) pile up by the million.
 */
const MAX_INFLIGHT_REQUESTS = 1000;
/** The least a request in flight counts against the byte bound, so small ones are not free. */
const MIN_REQUEST_COST = 4096;
/** A fetch let through a full ResponseBudget (its connection held nothing) answers at most this. */
const MIN_FETCH_BYTES = 64 * 1024;

/** What a connection is given by its server. */
export interface ConnectionDeps {
  broker: Broker;
  handlers: HandlerTable;
  limits: ServerLimits;
  logger: Logger;
  /** Set when the connection is over a limit: its first request is refused, then it closes. */
  refusal?: ConchError | null;
  /** Reads through net's `onread` (adopt-socket.ts); null reads through 'data' events. */
  reads?: SocketReads | null;
  pool?: FramePool | null;
  /** The server's bound on response bytes of all its connections; none when absent. */
  budget?: ResponseBudget;
  /** A coarse clock (ConnectionSweep.now); the timeouts are checked against it. */
  clock?: CoarseClock;
  /** Shared by the server's connections, so a thousand bad clients cost a line, not a thousand. */
  logLimiter?: LogLimiter;
}

/** For connections made without a server. */
const OWN_LIMITER = new LogLimiter();

export class Connection implements TicketOwner, StreamHost, BudgetWaiter {
  readonly id: number;
  readonly remote: string;
  #socket: Socket;
  #parser: FrameParser;
  #pool: FramePool | null;
  #handlers: HandlerTable;
  #limits: ServerLimits;
  #logger: Logger;
  #abort = new AbortController();
  #ctx: RequestContext;
  /** Set when the connection is over the limit: its first request is refused, then it closes. */
  #refusal: ConchError | null;
  #handshaken = false;
  #handshakeTimer: NodeJS.Timeout | null = null;
  /** Requests started and not yet answered, and the bytes they count against the bound. */
  #inflight = 0;
  #inflightBytes = 0;
  /** False once no more requests are taken: the client ended, the server stops, or a refusal. */
  #reading = true;
  #paused = false;
  #closed = false;
  #onIdle: (() => void) | null = null;
  #budget: ResponseBudget | null;
  /** What this connection has charged to the budget: #inflightBytes + writableLength when last seen. */
  #charged = 0;
  /** A fetch taken from the parser while the budget was full, started once it has room. */
  #held: Buffer | null = null;
  #activity: ConnectionActivity;
  #limiter: LogLimiter;
  /** Fetch streams open on this connection, and those waiting for it to drain (StreamHost). */
  readonly streams = new Map<number, OpenStream>();
  #roomWaiters: OpenStream[] = [];
  readonly closed: Promise<void>;

  constructor(id: number, socket: Socket, deps: ConnectionDeps) {
    const { broker, handlers, limits, logger } = deps;
    const pool = deps.pool ?? null;
    const reads = deps.reads ?? null;
    this.id = id;
    this.#socket = socket;
    this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    this.#handlers = handlers;
    this.#limits = limits;
    this.#logger = logger.child({ conn: id, remote: this.remote });
    this.#refusal = deps.refusal ?? null;
    this.#pool = pool;
    this.#budget = deps.budget ?? null;
    this.#activity = new ConnectionActivity(deps.clock ?? SYSTEM_CLOCK);
    this.#limiter = deps.logLimiter ?? OWN_LIMITER;
    this.#parser = new FrameParser(
      pool === null ? { maxFrameBytes: limits.maxFrameBytes } : { maxFrameBytes: limits.maxFrameBytes, pool },
    );
    this.#ctx = new RequestContext(broker, limits, this.#logger, this.#abort.signal, this, this);
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
      this.#wakeStreams();
      this.#pump();
    });
    socket.on("end", () => this.#onEnd());
    socket.on("error", (err) => this.#logger.debug({ err }, "socket error"));
    socket.on("close", () => this.#onClose());
    this.#handshakeTimer = setTimeout(() => this.#handshakeTimedOut(), limits.handshakeTimeoutMs);
    this.#handshakeTimer.unref();
  }

  /** Requests in flight. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Bytes counted against the in-flight bound: requests in progress plus unsent responses. */
  get pendingBytes(): number {
    return this.#inflightBytes + this.#socket.writableLength;
  }

  /** Whether reading is paused by backpressure. */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Stops taking requests, wakes the long polls, and closes once every request in flight is
   * answered. Resolves when the socket has closed.
   */
  shutdown(): Promise<void> {
    this.#stopReading();
    this.#abortWaits(new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down"));
    this.#endWhenIdle();
    return this.closed;
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (!this.#reading) return;
    this.#parser.push(chunk);
    this.#pump();
  }

  /** Takes frames from the parser and starts their requests while under the in-flight bound. */
  #pump(): void {
    if (this.#held !== null) {
      if (!this.#fetchFits()) {
        this.#budget?.wait(this);
        return;
      }
      const held = this.#held;
      this.#held = null;
      if (this.#reading && !this.#closed) this.#handleFrame(held);
    }
    // A request answered at once pumps again from inside #handleFrame, and may hold a fetch there.
    while (this.#reading && !this.#closed && this.#held === null) {
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
      if (!this.#fetchFits() && isFetch(frame)) {
        // Held until the budget drains; a view of the shared scratch is copied first.
        this.#held = this.#parser.lastFrameBorrowed ? Buffer.from(frame) : frame;
        this.#budget?.wait(this);
        this.#setPaused(true);
        return;
      }
      this.#handleFrame(frame);
    }
    if (this.#held === null) this.#setPaused(false);
  }

  /**
   * Whether a fetch may start: the server's budget has room for the largest answer, or this
   * connection holds nothing (it then answers at most MIN_FETCH_BYTES; see #handleFrame).
   */
  #fetchFits(): boolean {
    const budget = this.#budget;
    return budget === null || this.pendingBytes === 0 || budget.hasRoom();
  }

  /** The budget has room again (BudgetWaiter). */
  budgetAvailable(): void {
    if (this.#closed) return;
    this.#wakeStreams();
    this.#pump();
    // Others woken first may have taken the room again: still waiting, wait again.
    if (this.#roomWaiters.length > 0 && !this.#closed) this.#budget?.wait(this);
  }

  /** Brings this connection's charge to the budget up to date. */
  #syncCharge(): void {
    if (this.#budget === null) return;
    const now = this.#closed ? 0 : this.#inflightBytes + this.#socket.writableLength;
    if (now === this.#charged) return;
    const delta = now - this.#charged;
    this.#charged = now;
    this.#budget.change(delta);
  }

  /** From the server's sweep: ends an idle connection, drops one stuck mid-frame. */
  checkTimeouts(now: number): void {
    if (this.#closed || !this.#reading || this.#refusal !== null) return;
    const midFrame = this.#parser.midFrame;
    // Frames we hold back (backpressure, the request cap, the budget) are not the client's delay.
    const arriving =
      midFrame && !this.#paused && this.#held === null && this.#inflight < MAX_INFLIGHT_REQUESTS;
    if (this.#activity.stalled(now, arriving, this.#limits.frameTimeoutMs)) {
      this.#limitedLog(
        "info",
        "stalled",
        {},
        `closing the connection: a frame unfinished after ${this.#limits.frameTimeoutMs} ms`,
      );
      this.#socket.destroy();
      return;
    }
    if (
      this.#handshaken &&
      !midFrame &&
      this.#inflight === 0 &&
      this.#activity.idleFor(now) >= this.#limits.idleTimeoutMs
    ) {
      this.#limitedLog(
        "info",
        "idle",
        {},
        `closing the connection: idle for ${this.#limits.idleTimeoutMs} ms`,
      );
      this.#stopReading();
      this.#endWhenIdle();
    }
  }

  /** A line of a kind that bad clients can repeat at will: at most one per interval. */
  #limitedLog(level: LimitedLevel, key: string, fields: object, msg: string): void {
    this.#limiter.log(this.#logger, level, key, fields, msg);
  }

  #framingFailed(err: unknown): void {
    this.#limitedLog("warn", "malformed", { err }, "closing the connection: frame over the maximum size");
    this.#socket.destroy();
  }

  #setPaused(paused: boolean): void {
    if (paused === this.#paused || this.#closed) return;
    this.#paused = paused;
    if (paused) {
      this.#socket.pause();
      this.#logger.debug({ pendingBytes: this.pendingBytes }, "reading paused: responses pending");
    } else if (this.#reading) {
      this.#socket.resume();
    }
  }

  #handleFrame(frame: Buffer): void {
    this.#activity.frameTaken();
    if (!hasRequestHeader(frame)) {
      this.#limitedLog(
        "warn",
        "malformed",
        { bytes: frame.length },
        "closing the connection: frame too short for a request header",
      );
      this.#socket.destroy();
      return;
    }
    const correlationId = requestCorrelationId(frame);
    const apiKey = requestApiKey(frame);
    if (this.#refusal !== null) {
      this.#refuse(correlationId, this.#refusal);
      return;
    }
    if (!this.#handshaken && apiKey !== ApiKey.HANDSHAKE) {
      this.#refuse(
        correlationId,
        new ConchError(ErrorCode.HANDSHAKE_REQUIRED, `${apiName(apiKey)} before the handshake`),
      );
      return;
    }
    const entry = this.#handlers[apiKey];
    if (entry === undefined) {
      this.#writeError(
        correlationId,
        apiKey,
        new ConchError(ErrorCode.UNKNOWN_API, `unknown apiKey ${apiKey}`),
      );
      return;
    }
    const version = requestApiVersion(frame);
    const minVersion = entry.minVersion ?? entry.version;
    if (version > entry.version || version < minVersion) {
      const range = minVersion === entry.version ? `${minVersion}` : `${minVersion}-${entry.version}`;
      const err = new ConchError(
        ErrorCode.UNSUPPORTED_VERSION,
        `${apiName(apiKey)} version ${version} is not supported (only ${range})`,
      );
      this.#writeError(correlationId, apiKey, err);
      return;
    }

    // A frame read into the server's shared scratch buffer is a view of it, which the next read
    // overwrites: handlers that copy what they keep before returning take it as it is, the others
    // get a copy.
    const copies = entry.copiesFrame === true;
    const request = !copies && this.#parser.lastFrameBorrowed ? Buffer.from(frame) : frame;
    this.#ctx.responseBytes = 0;
    this.#ctx.maxFetchBytes = this.fetchBytes();
    let reply: Handled;
    try {
      reply = entry.handle(this.#ctx, request, correlationId);
    } catch (err) {
      this.#writeError(correlationId, apiKey, err);
      return;
    } finally {
      // The handler copied what it keeps: the frame's memory serves the next large request.
      if (copies) this.#pool?.give(frame);
    }
    if (apiKey === ApiKey.HANDSHAKE) this.#handshakeDone();
    if (reply === null || Buffer.isBuffer(reply) || isBufferList(reply)) {
      if (reply !== null) this.#write(reply);
      return;
    }
    const cost = Math.max(frame.length, MIN_REQUEST_COST) + this.#ctx.responseBytes;
    this.#inflight++;
    this.#inflightBytes += cost;
    this.#syncCharge();
    if (reply instanceof ReplyTicket) {
      reply.apiKey = apiKey;
      reply.cost = cost;
      reply.register();
      return;
    }
    reply.then(
      (r) => this.#settled(cost, r),
      (err: unknown) => {
        this.#writeError(correlationId, apiKey, err);
        this.#settled(cost, null);
      },
    );
  }

  /** A ticket's answer (TicketOwner). */
  answered(ticket: ReplyTicket, reply: Reply): void {
    this.#settled(ticket.cost, reply);
  }

  /** A ticket's failure (TicketOwner). */
  failed(ticket: ReplyTicket, err: unknown): void {
    this.#writeError(ticket.correlationId, ticket.apiKey, err);
    this.#settled(ticket.cost, null);
  }

  /** A stream's response (StreamHost): written now, outside the request accounting. */
  push(reply: Reply): void {
    if (reply !== null) this.#write(reply);
  }

  /** Whether requests in flight and unsent responses are under the bound (StreamHost). */
  hasRoom(): boolean {
    const pending = this.#inflightBytes + this.#socket.writableLength;
    if (pending > this.#limits.maxInflightBytes) return false;
    return this.#budget === null || pending === 0 || this.#budget.hasRoom();
  }

  /**
   * The most a fetch (or a stream's round) may read now (StreamHost): a small answer only when it
   * was let through a full budget because this connection held nothing.
   */
  fetchBytes(): number {
    const budget = this.#budget;
    const full = budget !== null && !budget.hasRoom();
    return full ? MIN_FETCH_BYTES : this.#limits.maxFetchBytes;
  }

  /** StreamHost: `stream` is told once the connection is under its bound again. */
  waitForRoom(stream: OpenStream): void {
    this.#roomWaiters.push(stream);
    // The connection's own bound is watched through 'drain'; the budget wakes it otherwise.
    this.#budget?.wait(this);
  }

  #wakeStreams(): void {
    if (this.#roomWaiters.length === 0 || this.#closed || !this.hasRoom()) return;
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const stream of waiters) stream.roomAvailable();
  }

  #settled(cost: number, reply: Reply): void {
    if (reply !== null) this.#write(reply);
    this.#inflight--;
    this.#inflightBytes -= cost;
    this.#activity.answered();
    this.#syncCharge();
    this.#wakeStreams();
    if (this.#inflight === 0 && this.#onIdle !== null) this.#onIdle();
    else this.#pump();
  }

  /**
   * Writes a reply. Several buffers go out corked, as one writev, never concatenated: a handler
   * that answers with a list (a fetch of more than JOIN_MAX_BYTES) has bytes too large to copy,
   * and a small answer comes as one buffer (see protocol/socket-writes.ts). write()'s
   * return value is reflected in writableLength, which the in-flight bound counts; 'drain' resumes.
   */
  #write(reply: Buffer | readonly Buffer[]): void {
    if (this.#closed) return;
    const socket = this.#socket;
    if (!isBufferList(reply)) {
      socket.write(reply);
    } else {
      socket.cork();
      for (const b of reply) if (b.length > 0) socket.write(b);
      socket.uncork();
    }
    this.#syncCharge();
  }

  #writeError(correlationId: number, apiKey: number, err: unknown): void {
    let code: number = ErrorCode.INTERNAL;
    let message = "internal broker error";
    if (err instanceof ConchError && err.code > ErrorCode.NONE && err.code < FIRST_CLIENT_ONLY_CODE) {
      code = err.code;
      message = err.message;
      this.#logger.debug({ api: apiName(apiKey), code: err.codeName, msg: err.message }, "request failed");
    } else {
      this.#limitedLog(
        "error",
        "unexpected",
        { err, api: apiName(apiKey), correlationId },
        "request failed unexpectedly",
      );
    }
    this.#write(encodeErrorResponse(correlationId, code, message));
  }

  /** Answers one request with an error, then closes once the rest are answered. */
  #refuse(correlationId: number, err: ConchError): void {
    this.#limitedLog("info", "refused", { code: err.codeName }, `closing the connection: ${err.message}`);
    this.#writeError(correlationId, ApiKey.HANDSHAKE, err);
    this.#stopReading();
    this.#endWhenIdle();
  }

  #handshakeDone(): void {
    this.#handshaken = true;
    if (this.#handshakeTimer !== null) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
    this.#logger.debug({ clientId: this.#ctx.clientId }, "handshake");
  }

  #handshakeTimedOut(): void {
    this.#handshakeTimer = null;
    if (this.#handshaken || this.#closed) return;
    this.#limitedLog("info", "no handshake", {}, "closing the connection: no handshake in time");
    this.#socket.destroy();
  }

  /**
   * The client finished sending: answer what is in flight, then close. A FIN cannot tell a client
   * that only half-closed from one that is gone, so long polls are woken too (they answer at once
   * with what they have) rather than holding the connection open for their full wait.
   */
  #onEnd(): void {
    if (this.#reading && this.#parser.midFrame) this.#logger.debug("client ended mid frame");
    this.#stopReading();
    this.#abortWaits(new ConchError(ErrorCode.CONNECTION_CLOSED, "the client ended the connection"));
    this.#endWhenIdle();
  }

  #abortWaits(reason: ConchError): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
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
      this.#onIdle = () => this.#endWhenIdle();
      return;
    }
    this.#onIdle = null;
    // destroySoon: end our side after the pending writes, then close even if the client keeps its side open.
    this.#socket.destroySoon();
  }

  #onClose(): void {
    this.#closed = true;
    this.#reading = false;
    if (this.#handshakeTimer !== null) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
    this.#abortWaits(new ConchError(ErrorCode.CONNECTION_CLOSED, "the connection closed"));
    this.#roomWaiters = [];
    // Nothing of this connection stays charged or held.
    this.#held = null;
    this.#budget?.cancel(this);
    this.#syncCharge();
    this.#logger.debug({ inflight: this.#inflight }, "connection closed");
  }
}

function isFetch(frame: Buffer): boolean {
  return hasRequestHeader(frame) && requestApiKey(frame) === ApiKey.FETCH;
}

function isBufferList(reply: Handled): reply is readonly Buffer[] {
  return Array.isArray(reply);
}

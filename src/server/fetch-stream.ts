/**
 * Fetch streams (protocol/fetch-stream.ts): a long poll that re-arms itself after every answer, so
 * a consumer that keeps up gets each new batch pushed without asking again. One object per stream,
 * for its whole life; each round is an ordinary fetch (Broker.fetchTo) with this as its listener.
 *
 * A push waits while the client holds `windowBytes` of records it has not credited back, and while
 * the connection is over its in-flight bound (the client is not reading); a stream stalled on its
 * window still sends an empty response every `maxWaitMs`, so the client can tell a live broker
 * from a dead one. The stream counts as one request in flight on its connection until it ends.
 */
import { AbortTarget, subscribe, unsubscribe } from "../broker/abort-fanout.js";
import type { FetchListener, FetchRequest } from "../broker/long-poll.js";
import { offsetAfter } from "../format/batch-header.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { releaseReadBuffer } from "../format/read-buffers.js";
import { fetchResponseBuffers } from "../protocol/fetch.js";
import {
  decodeFetchStreamRequest,
  decodeStreamCancel,
  decodeStreamCredit,
  type FetchStreamRequest,
} from "../protocol/fetch-stream.js";
import type { ReadResult } from "../storage/partition-log.js";
import { authorize } from "./authorize.js";
import type { RequestContext } from "./handler.js";
import { nativeFetchResponse, nativeReadResult } from "./native-records.js";
import { ReplyTicket } from "./reply-ticket.js";
import type { OpenStream } from "./stream-host.js";
import { checkStreamRequest, streamEndReason } from "./stream-rules.js";

/** FetchStream: opens the stream; its ticket stays in flight until the stream ends. */
export function fetchStream(ctx: RequestContext, frame: Buffer, correlationId: number): ReplyTicket {
  const req = decodeFetchStreamRequest(frame);
  authorize(ctx, "read", "topic", req.topic);
  checkStreamRequest(ctx, correlationId, "fetch stream", req);
  req.maxBytes = Math.min(req.maxBytes, ctx.limits.maxFetchBytes);
  const stream = new FetchStream(ctx, correlationId, req);
  stream.start();
  return stream.ticket;
}

/** StreamCredit: no response; credit for a stream that has ended is ignored. */
export function streamCredit(ctx: RequestContext, frame: Buffer): null {
  const credit = decodeStreamCredit(frame);
  ctx.streams.streams.get(credit.streamId)?.credit(credit.bytes);
  return null;
}

/** StreamCancel: no response; a cancel for a stream that has ended is ignored. */
export function streamCancel(ctx: RequestContext, frame: Buffer): null {
  ctx.streams.streams.get(decodeStreamCancel(frame))?.cancel();
  return null;
}

class FetchStream extends AbortTarget implements FetchListener, OpenStream {
  /** What the connection accounts: answered (with nothing, or an error) when the stream ends. */
  readonly ticket: ReplyTicket;
  readonly #ctx: RequestContext;
  readonly #id: number;
  readonly #req: FetchStreamRequest;
  /** Ends the round under way when the stream is cancelled. */
  readonly #rounds = new AbortController();
  readonly #round: FetchRequest;
  #offset: number;
  /** Record bytes sent and not credited back. */
  #unacked = 0;
  #highWatermark = 0;
  #logStartOffset = 0;
  /** A round (a fetch) is under way. */
  #fetching = false;
  /** Inside #arm: a round answered at once is taken up by #arm's loop instead of recursing. */
  #arming = false;
  #armAgain = false;
  #waitingForRoom = false;
  #keepAlive: NodeJS.Timeout | null = null;
  #ended = false;

  constructor(ctx: RequestContext, id: number, req: FetchStreamRequest) {
    super();
    this.#ctx = ctx;
    this.#id = id;
    this.#req = req;
    this.#offset = req.offset;
    this.#round = {
      topic: req.topic,
      partition: req.partition,
      offset: req.offset,
      maxBytes: 0,
      maxWaitMs: req.maxWaitMs,
      minBytes: req.minBytes,
      signal: this.#rounds.signal,
    };
    this.ticket = new ReplyTicket(ctx.tickets, id);
  }

  start(): void {
    this.#ctx.streams.streams.set(this.#id, this);
    subscribe(this.#ctx.signal, this);
    this.#arm();
  }

  credit(bytes: number): void {
    this.#unacked = Math.max(0, this.#unacked - bytes);
    this.#arm();
  }

  cancel(): void {
    this.#end(null);
  }

  roomAvailable(): void {
    this.#waitingForRoom = false;
    this.#arm();
  }

  /** The connection closed (the stream ends silently) or the broker stops (SHUTTING_DOWN). */
  signalAborted(): void {
    this.#end(streamEndReason(this.#ctx));
  }

  /** Starts the next round unless one is under way, or the window or the connection is full. */
  #arm(): void {
    if (this.#arming) {
      this.#armAgain = true;
      return;
    }
    this.#arming = true;
    do {
      this.#armAgain = false;
      if (this.#ended || this.#fetching || this.#waitingForRoom) break;
      const room = this.#req.windowBytes - this.#unacked;
      if (room <= 0) {
        this.#startKeepAlive();
        break;
      }
      this.#stopKeepAlive();
      const req = this.#req;
      if (req.group !== "") {
        try {
          this.#ctx.broker.groups.checkOwner(
            req.group,
            req.memberId,
            req.generation,
            req.topic,
            req.partition,
          );
        } catch (err) {
          this.#end(err);
          break;
        }
      }
      this.#fetching = true;
      // One request object for the stream's life: a round starts only once the last has ended.
      const round = this.#round;
      round.offset = this.#offset;
      round.maxBytes = Math.min(req.maxBytes, room, this.#ctx.streams.fetchBytes());
      this.#ctx.broker.fetchTo(round, this);
    } while (this.#armAgain);
    this.#arming = false;
  }

  fetched(stored: ReadResult): void {
    this.#fetching = false;
    if (this.#ended) {
      releaseReadBuffer(stored.records);
      return;
    }
    let r: ReadResult;
    try {
      r = nativeReadResult(stored);
    } catch (err) {
      releaseReadBuffer(stored.records);
      this.#end(err);
      return;
    }
    const host = this.#ctx.streams;
    // A client that stopped reading gets nothing more until the connection drains; the data is
    // read again then, and what was read is dropped (its buffer serves the next read).
    if (!host.hasRoom()) {
      releaseReadBuffer(stored.records);
      this.#waitingForRoom = true;
      host.waitForRoom(this);
      return;
    }
    if (r.records.length > 0) {
      const next = offsetAfter(r.records);
      if (next <= this.#offset) {
        releaseReadBuffer(stored.records);
        this.#end(
          new ConchError(ErrorCode.INTERNAL, `a read at ${this.#offset} returned nothing at or after it`),
        );
        return;
      }
      this.#offset = next;
      this.#unacked += r.records.length;
    }
    this.#highWatermark = r.highWatermark;
    this.#logStartOffset = r.logStartOffset;
    host.push(nativeFetchResponse(this.#id, stored, r));
    this.#arm();
  }

  fetchFailed(err: unknown): void {
    this.#fetching = false;
    this.#end(err);
  }

  /** The window is full: an empty response every maxWaitMs says the stream is alive. */
  #startKeepAlive(): void {
    if (this.#keepAlive !== null) return;
    this.#keepAlive = setTimeout(() => {
      this.#keepAlive = null;
      if (this.#ended) return;
      const host = this.#ctx.streams;
      if (host.hasRoom()) {
        host.push(
          fetchResponseBuffers(this.#id, {
            records: EMPTY,
            highWatermark: this.#highWatermark,
            logStartOffset: this.#logStartOffset,
          }),
        );
      }
      this.#arm();
    }, this.#req.maxWaitMs);
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive === null) return;
    clearTimeout(this.#keepAlive);
    this.#keepAlive = null;
  }

  /** Ends the stream: with an error response when `err` is set, else silently. */
  #end(err: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopKeepAlive();
    unsubscribe(this);
    this.#ctx.streams.streams.delete(this.#id);
    this.#rounds.abort();
    if (err === null) this.ticket.reply(null);
    else this.ticket.fail(err);
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * What a request handler is. A handler decodes its request from the frame, calls the broker and
 * returns the response bytes or, when the broker answers later, a promise of them or a ReplyTicket
 * (reply-ticket.ts: produce and fetch answer through one, without promises). It is called in
 * the order requests arrive on the connection, and whatever it calls synchronously happens in that
 * order (so a produce reaches the partition log in arrival order). It may throw or reject: a
 * ConchError is answered with its code, anything else with INTERNAL.
 */
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import type { Authorizer } from "../security/authorizer.js";
import type { ConnectionAuth } from "../security/connection-auth.js";
import type { ReplyTicket, TicketOwner } from "./reply-ticket.js";
import type { ServerLimits } from "./server-options.js";
import type { StreamHost } from "./stream-host.js";

/**
 * Response bytes: one buffer, several buffers written together (a fetch response's header and its
 * stored records, never concatenated), or null for no response (a produce with acks = 0).
 */
export type Reply = Buffer | readonly Buffer[] | null;

/** What a handler returns. */
export type Handled = Reply | Promise<Reply> | ReplyTicket;

export type Handler = (ctx: RequestContext, frame: Buffer, correlationId: number) => Handled;

export interface HandlerEntry {
  /** The apiVersion the handler speaks; any other is answered UNSUPPORTED_VERSION. */
  version: number;
  /** The lowest apiVersion it also speaks, for a request type sent at several; default `version`. */
  minVersion?: number;
  /**
   * The handler keeps no reference to the frame (nor to any view of it) once it returns or
   * throws, having copied what it needs: the connection may then reuse the frame's memory.
   */
  copiesFrame?: boolean;
  handle: Handler;
}

/** Handlers by apiKey. */
export type HandlerTable = ReadonlyArray<HandlerEntry | undefined>;

/** The current ACLs: read at each check, so a reload reaches every connection at once. */
export interface AuthorizerSource {
  readonly authorizer: Authorizer | null;
}

/** One per connection, handed to every handler of its requests. */
export class RequestContext {
  readonly broker: Broker;
  readonly limits: ServerLimits;
  readonly logger: Logger;
  /** Aborted when the connection closes or the server shuts down: long polls end at once. */
  readonly signal: AbortSignal;
  /** Where the tickets of this connection's requests are answered. */
  readonly tickets: TicketOwner;
  /** Where this connection's fetch streams push their responses. */
  readonly streams: StreamHost;
  /** Set by the handshake, for logs. */
  clientId = "";
  /** Who the connection is and its SASL login; null on a server without security. */
  auth: ConnectionAuth | null = null;
  /** Where the ACLs are (re)read from; null with authorization off. */
  authorization: AuthorizerSource | null = null;
  /** Takes no more requests and closes the connection once those in flight are answered. */
  endConnection: () => void = () => {};
  /** A log line bad clients can repeat at will: at most one per interval for all connections. */
  limitedLog: (key: string, fields: object, msg: string) => void = () => {};
  /**
   * A handler whose response may be large (a fetch) sets this, before it returns, to the bytes it
   * may answer with; they count against the connection's in-flight bound until it answers.
   */
  responseBytes = 0;
  /**
   * The most a fetch may answer with now: the server's maxFetchBytes, less while the server's
   * response budget is full (set by the connection before each request).
   */
  maxFetchBytes: number;

  constructor(
    broker: Broker,
    limits: ServerLimits,
    logger: Logger,
    signal: AbortSignal,
    tickets: TicketOwner,
    streams: StreamHost,
  ) {
    this.broker = broker;
    this.limits = limits;
    this.logger = logger;
    this.signal = signal;
    this.tickets = tickets;
    this.streams = streams;
    this.maxFetchBytes = limits.maxFetchBytes;
  }
}

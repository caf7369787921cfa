/**
 * The native protocol's side of a connection (a Session over a FramedConnection, src/net/): the
 * handshake, then requests dispatched to their handlers by apiKey.
 *
 * - Requests are started one by one in arrival order; many may be in flight at once, and each is
 *   answered with its correlation id whenever it completes.
 * - The handshake comes first; any other request before it is answered HANDSHAKE_REQUIRED and the
 *   connection closed. A connection with no handshake after `handshakeTimeoutMs` is dropped.
 * - With security (`auth`), a listener that requires a login answers every request but the
 *   handshake and the SASL ones ILLEGAL_SASL_STATE until the connection has logged in (or shown a
 *   verified client certificate), and closes it.
 * - A frame too short for a request header closes the connection at once; request errors are
 *   answered and the connection stays.
 * - A handler that copies what it keeps (`copiesFrame`, a produce) takes its frame as it is, even
 *   a view of the shared scratch buffer; the others get a copy of such a view. The transport then
 *   reuses a copied frame's memory.
 */
import type { Broker } from "../broker/broker.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { FramedConnection } from "../net/framed-connection.js";
import type { Session } from "../net/session.js";
import { ApiKey, apiName } from "../protocol/api.js";
import { encodeErrorResponse } from "../protocol/error-response.js";
import {
  hasRequestHeader,
  requestApiKey,
  requestApiVersion,
  requestCorrelationId,
} from "../protocol/frame.js";
import { certificatePrincipal } from "../security/certificate-principal.js";
import { ANONYMOUS_PRINCIPAL, type AuthSettings, ConnectionAuth } from "../security/connection-auth.js";
import type { QuotaManager } from "../security/quota-manager.js";
import {
  type AuthorizerSource,
  type Handled,
  type HandlerTable,
  type Reply,
  RequestContext,
} from "./handler.js";
import { ReplyTicket, type TicketOwner } from "./reply-ticket.js";
import type { ServerLimits } from "./server-options.js";
import type { OpenStream, StreamHost } from "./stream-host.js";
import { isWireError, wireErrorCode, wireErrorMessage } from "./wire-error.js";

/** What a session needs of the broker's security (BrokerSecurity). */
export interface SessionSecurity extends AuthorizerSource {
  readonly auth: AuthSettings;
  readonly quotas: QuotaManager;
  /** Whether any quota is set; without one nothing is counted. */
  readonly throttling: boolean;
}

/** What a connection may send before it has logged in, when logging in is required. */
const LOGIN_API_KEYS: ReadonlySet<number> = new Set([
  ApiKey.HANDSHAKE,
  ApiKey.SASL_HANDSHAKE,
  ApiKey.SASL_AUTHENTICATE,
]);

export class NativeSession implements Session, TicketOwner, StreamHost {
  #conn: FramedConnection;
  #handlers: HandlerTable;
  #limits: ServerLimits;
  #abort = new AbortController();
  #ctx: RequestContext;
  #security: SessionSecurity | null;
  #handshaken = false;
  #handshakeTimer: NodeJS.Timeout | null = null;
  /** Fetch streams open on this connection (StreamHost). */
  readonly streams = new Map<number, OpenStream>();

  constructor(
    conn: FramedConnection,
    broker: Broker,
    handlers: HandlerTable,
    limits: ServerLimits,
    security: SessionSecurity | null = null,
  ) {
    this.#conn = conn;
    this.#handlers = handlers;
    this.#limits = limits;
    this.#security = security;
    const ctx = new RequestContext(broker, limits, conn.logger, this.#abort.signal, this, this);
    this.#ctx = ctx;
    if (security !== null) {
      ctx.authorization = security;
      const certificate = conn.verifiedPeerCertificate();
      ctx.auth = new ConnectionAuth(security.auth, {
        tls: conn.encrypted,
        address: conn.remoteAddress,
        certificatePrincipal: certificate === null ? null : certificatePrincipal(certificate),
      });
    }
    ctx.endConnection = () => conn.closeWhenAnswered();
    ctx.limitedLog = (key, fields, msg) => conn.limitedLog("info", key, fields, msg);
    this.#handshakeTimer = setTimeout(() => this.#handshakeTimedOut(), limits.handshakeTimeoutMs);
    this.#handshakeTimer.unref();
  }

  /** An idle connection is closed only after its handshake (before it, the handshake timeout rules). */
  get idleCloses(): boolean {
    return this.#handshaken;
  }

  needsResponseRoom(frame: Buffer): boolean {
    return hasRequestHeader(frame) && requestApiKey(frame) === ApiKey.FETCH;
  }

  frame(frame: Buffer, borrowed: boolean): boolean {
    if (!this.#hasHeader(frame)) return false;
    const correlationId = requestCorrelationId(frame);
    const apiKey = requestApiKey(frame);
    if (!this.#handshaken && apiKey !== ApiKey.HANDSHAKE) {
      this.refuse(
        frame,
        new ConchError(ErrorCode.HANDSHAKE_REQUIRED, `${apiName(apiKey)} before the handshake`),
      );
      this.#conn.closeWhenAnswered();
      return false;
    }
    const auth = this.#ctx.auth;
    if (auth !== null && !auth.authenticated && !LOGIN_API_KEYS.has(apiKey)) {
      this.refuse(
        frame,
        new ConchError(ErrorCode.ILLEGAL_SASL_STATE, `${apiName(apiKey)} before logging in (SASL)`),
      );
      this.#conn.closeWhenAnswered();
      return false;
    }
    const entry = this.#handlers[apiKey];
    if (entry === undefined) {
      this.#writeError(
        correlationId,
        apiKey,
        new ConchError(ErrorCode.UNKNOWN_API, `unknown apiKey ${apiKey}`),
      );
      return false;
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
      return false;
    }

    // A borrowed frame is a view of the shared scratch buffer, which the next read overwrites.
    const copies = entry.copiesFrame === true;
    const request = !copies && borrowed ? Buffer.from(frame) : frame;
    const ctx = this.#ctx;
    ctx.responseBytes = 0;
    ctx.maxFetchBytes = this.fetchBytes();
    // Quotas: the request and a produce's bytes are counted now; the response is held that long.
    const hold = this.#security?.throttling === true ? this.#countRequest(apiKey, frame.length) : 0;
    let reply: Handled;
    try {
      reply = entry.handle(ctx, request, correlationId);
    } catch (err) {
      this.#writeError(correlationId, apiKey, err);
      // A login step that fails ends the connection: a guesser pays a connection per guess.
      if (apiKey === ApiKey.SASL_HANDSHAKE || apiKey === ApiKey.SASL_AUTHENTICATE)
        this.#conn.closeWhenAnswered();
      return copies;
    }
    if (apiKey === ApiKey.HANDSHAKE) this.#handshakeDone();
    if (hold === 0 && (reply === null || Buffer.isBuffer(reply) || isBufferList(reply))) {
      if (reply !== null) this.#conn.write(reply);
      return copies;
    }
    const cost = this.#conn.begin(frame.length, ctx.responseBytes);
    if (reply instanceof ReplyTicket) {
      reply.apiKey = apiKey;
      reply.cost = cost;
      reply.holdMs = hold;
      reply.register();
      return copies;
    }
    if (reply === null || Buffer.isBuffer(reply) || isBufferList(reply)) {
      this.#finishAfter(hold, cost, reply);
      return copies;
    }
    reply.then(
      (r) => this.#finishAfter(hold, cost, r),
      (err: unknown) => {
        this.#writeError(correlationId, apiKey, err);
        this.#conn.finish(cost, null);
      },
    );
    return copies;
  }

  /** Answers one request with an error; the connection then closes once all is answered. */
  refuse(frame: Buffer, err: ConchError): void {
    if (!this.#hasHeader(frame)) return;
    this.#conn.limitedLog(
      "info",
      "refused",
      { code: err.codeName },
      `closing the connection: ${err.message}`,
    );
    this.#writeError(requestCorrelationId(frame), ApiKey.HANDSHAKE, err);
  }

  abort(reason: ConchError): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
  }

  closed(): void {
    if (this.#handshakeTimer !== null) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
    this.abort(new ConchError(ErrorCode.CONNECTION_CLOSED, "the connection closed"));
  }

  /** A ticket's answer (TicketOwner): a fetch's bytes count against the fetch quota now. */
  answered(ticket: ReplyTicket, reply: Reply): void {
    let hold = ticket.holdMs;
    const security = this.#security;
    if (security?.throttling === true && ticket.apiKey === ApiKey.FETCH && reply !== null) {
      const bytes = Buffer.isBuffer(reply) ? reply.length : replyBytes(reply);
      const principal = this.#ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL;
      hold = Math.max(hold, security.quotas.recordFetch(principal, this.#ctx.clientId, bytes));
    }
    this.#finishAfter(hold, ticket.cost, reply);
  }

  /**
   * Counts a request against the quotas; returns the ms to hold its response, and stops reading
   * the connection that long (Kafka's throttle: data is delayed, never dropped).
   */
  #countRequest(apiKey: number, frameBytes: number): number {
    const quotas = (this.#security as SessionSecurity).quotas;
    const principal = this.#ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL;
    const clientId = this.#ctx.clientId;
    let hold = quotas.recordRequest(principal, clientId);
    if (apiKey === ApiKey.PRODUCE)
      hold = Math.max(hold, quotas.recordProduce(principal, clientId, frameBytes));
    return hold;
  }

  /** Finishes a request now, or after `hold` ms with reading stopped meanwhile. */
  #finishAfter(hold: number, cost: number, reply: Reply): void {
    if (hold <= 0) {
      this.#conn.finish(cost, reply);
      return;
    }
    this.#conn.throttle(hold);
    setTimeout(() => this.#conn.finish(cost, reply), hold);
  }

  /** A ticket's failure (TicketOwner). */
  failed(ticket: ReplyTicket, err: unknown): void {
    this.#writeError(ticket.correlationId, ticket.apiKey, err);
    this.#conn.finish(ticket.cost, null);
  }

  /** A stream's response (StreamHost): written now, outside the request accounting. */
  push(reply: Reply): void {
    if (reply !== null) this.#conn.write(reply);
  }

  /** Whether requests in flight and unsent responses are under the bounds (StreamHost). */
  hasRoom(): boolean {
    return this.#conn.hasRoom();
  }

  /** The most a fetch (or a stream's round) may read now (StreamHost). */
  fetchBytes(): number {
    return this.#conn.responseCap(this.#limits.maxFetchBytes);
  }

  /** StreamHost: `stream` is told once the connection is under its bounds again. */
  waitForRoom(stream: OpenStream): void {
    this.#conn.waitForRoom(stream);
  }

  /** A frame too short for a request header ends the connection. */
  #hasHeader(frame: Buffer): boolean {
    if (hasRequestHeader(frame)) return true;
    this.#conn.limitedLog(
      "warn",
      "malformed",
      { bytes: frame.length },
      "closing the connection: frame too short for a request header",
    );
    this.#conn.destroy();
    return false;
  }

  #writeError(correlationId: number, apiKey: number, err: unknown): void {
    const code = wireErrorCode(err);
    const message = wireErrorMessage(err);
    if (isWireError(err)) {
      this.#conn.logger.debug(
        { api: apiName(apiKey), code: err.codeName, msg: err.message },
        "request failed",
      );
    } else {
      this.#conn.limitedLog(
        "error",
        "unexpected",
        { err, api: apiName(apiKey), correlationId },
        "request failed unexpectedly",
      );
    }
    this.#conn.write(encodeErrorResponse(correlationId, code, message));
  }

  #handshakeDone(): void {
    this.#handshaken = true;
    if (this.#handshakeTimer !== null) clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
    this.#conn.logger.debug({ clientId: this.#ctx.clientId }, "handshake");
  }

  #handshakeTimedOut(): void {
    this.#handshakeTimer = null;
    if (this.#handshaken) return;
    this.#conn.limitedLog("info", "no handshake", {}, "closing the connection: no handshake in time");
    this.#conn.destroy();
  }
}

function isBufferList(reply: Handled): reply is readonly Buffer[] {
  return Array.isArray(reply);
}

function replyBytes(reply: readonly Buffer[]): number {
  let n = 0;
  for (const b of reply) n += b.length;
  return n;
}

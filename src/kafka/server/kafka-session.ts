/**
 * The Kafka protocol's side of a connection (a Session over a FramedConnection, src/net/):
 * requests decoded and dispatched by API key (kafka-handler.ts), answered in request order
 * (response-queue.ts).
 *
 * - No handshake is required: clients open with ApiVersions, but kcat -L and older clients may
 *   not, and Kafka answers them all.
 * - An ApiVersions version we do not speak (librdkafka may ask above 3) is answered with error 35
 *   in a v0 body listing our ranges, which every client reads and retries within; closing instead
 *   would be fatal to librdkafka.
 * - A frame that is not a request, an API we do not serve, a version outside its range, a body
 *   that does not decode: Kafka has no response for these, so the connection is closed once the
 *   requests before it are answered (a client reconnects; nothing else is affected).
 * - With security, a listener that requires a login closes a connection that sends anything but
 *   ApiVersions, SaslHandshake and SaslAuthenticate before it has logged in (or shown a verified
 *   client certificate), as Kafka does: there is no error code every request can carry.
 * - A request answered at once with nothing in flight is written at once; anything else takes a
 *   slot in the queue and counts against the transport's bounds until written.
 * - With a quota set, each request is counted and its answer throttled (kafka-throttle.ts).
 */
import type { TlsOptions } from "node:tls";
import type { Broker } from "../../broker/broker.js";
import { ConchError, ErrorCode } from "../../format/errors.js";
import type { FramedConnection } from "../../net/framed-connection.js";
import type { Session } from "../../net/session.js";
import { certificatePrincipal } from "../../security/certificate-principal.js";
import { ANONYMOUS_PRINCIPAL, type AuthSettings, ConnectionAuth } from "../../security/connection-auth.js";
import type { QuotaManager } from "../../security/quota-manager.js";
import type { AuthorizerSource } from "../../server/handler.js";
import type { ServerLimits } from "../../server/server-options.js";
import type { BatchConversion } from "../convert/batch-conversion.js";
import { ApiKey, supportedApi } from "../protocol/api-keys.js";
import { decodeUnsizedRequestHeader, type KafkaRequestHeader, MIN_REQUEST_FRAME } from "../protocol/frame.js";
import { refuseApiVersion } from "./handlers/api-versions.js";
import type {
  KafkaContext,
  KafkaHandlerTable,
  KafkaNode,
  KafkaReply,
  KafkaResponse,
} from "./kafka-handler.js";
import { throttledReply } from "./kafka-throttle.js";
import { ResponseQueue, type ResponseSlot } from "./response-queue.js";

/** What a session needs of its front-end, shared by every connection of the listener. */
export interface KafkaSessionDeps {
  broker: Broker;
  handlers: KafkaHandlerTable;
  limits: ServerLimits;
  batches: BatchConversion;
  /** The node clients are told about: its port is known once the listener listens. */
  node: () => KafkaNode;
  /** The broker's security (BrokerSecurity); null: no logins, no ACLs. */
  security: KafkaSecurity | null;
}

/** What a Kafka session needs of the broker's security. */
export interface KafkaSecurity extends AuthorizerSource {
  readonly auth: AuthSettings;
  /** Produce, fetch and request rates (kafka-throttle.ts); counted only while `throttling`. */
  readonly quotas: QuotaManager;
  readonly throttling: boolean;
  /** Options for a TLS listener's `tls.createServer`; null without TLS material. */
  tlsOptions(): TlsOptions | null;
}

/** What a connection may send before it has logged in, when logging in is required. */
const LOGIN_API_KEYS: ReadonlySet<number> = new Set([
  ApiKey.API_VERSIONS,
  ApiKey.SASL_HANDSHAKE,
  ApiKey.SASL_AUTHENTICATE,
]);

/** Where the api key is in a request frame (the transport hands frames without their size field). */
const API_KEY_AT = 0;
/** The shortest request header, without the size field the transport has already taken. */
const MIN_HEADER_BYTES = MIN_REQUEST_FRAME - 4;

export class KafkaSession implements Session {
  readonly #conn: FramedConnection;
  readonly #deps: KafkaSessionDeps;
  readonly #abort = new AbortController();
  readonly #queue: ResponseQueue;
  readonly #ctx: KafkaContext;
  #failed = false;
  /** Set while a handler runs: an end it asks for waits until its answer is queued. */
  #handling = false;
  #endAfterAnswer = false;

  constructor(conn: FramedConnection, deps: KafkaSessionDeps) {
    this.#conn = conn;
    this.#deps = deps;
    this.#queue = new ResponseQueue(conn);
    const limits = deps.limits;
    const security = deps.security;
    let auth: ConnectionAuth | null = null;
    if (security !== null) {
      const certificate = conn.verifiedPeerCertificate();
      auth = new ConnectionAuth(security.auth, {
        tls: conn.encrypted,
        address: conn.remoteAddress,
        certificatePrincipal: certificate === null ? null : certificatePrincipal(certificate),
      });
    }
    this.#ctx = {
      broker: deps.broker,
      node: deps.node(),
      batches: deps.batches,
      logger: conn.logger,
      signal: this.#abort.signal,
      responseCap: (max) => conn.responseCap(Math.min(max, limits.maxFetchBytes)),
      responseBytes: 0,
      limitedLog: (key, fields, msg) => conn.limitedLog("info", key, fields, msg),
      auth,
      authorization: security,
      clientId: null,
      endConnection: () => {
        if (this.#handling) this.#endAfterAnswer = true;
        else conn.closeWhenAnswered();
      },
    };
  }

  /** Kafka has no handshake to wait for: an idle connection may always be closed. */
  get idleCloses(): boolean {
    return true;
  }

  needsResponseRoom(frame: Buffer): boolean {
    if (frame.length < API_KEY_AT + 2) return false;
    const entry = this.#deps.handlers.get(frame.readInt16BE(API_KEY_AT));
    return entry?.largeResponse === true;
  }

  frame(frame: Buffer, borrowed: boolean): boolean {
    if (this.#failed) return true;
    if (frame.length < MIN_HEADER_BYTES) {
      this.#close("malformed", { bytes: frame.length }, "a frame too short for a request header");
      return true;
    }
    const entry = this.#deps.handlers.get(frame.readInt16BE(API_KEY_AT));
    const keep = entry !== undefined && entry.doneWithFrame !== true;
    // A view of the shared read buffer is overwritten by the next read: copied if kept.
    const request = keep && borrowed ? Buffer.from(frame) : frame;
    let h: KafkaRequestHeader;
    try {
      h = decodeUnsizedRequestHeader(request);
    } catch (err) {
      this.#close("malformed", { err }, "a malformed request header");
      return true;
    }
    const auth = this.#ctx.auth;
    if (auth !== null && !auth.authenticated && !LOGIN_API_KEYS.has(h.apiKey)) {
      const api = supportedApi(h.apiKey);
      const what = api === undefined ? `api ${h.apiKey}` : api.name;
      this.#close("unauthenticated", { apiKey: h.apiKey }, `${what} before logging in (SASL)`);
      return true;
    }
    if (!h.supported || entry === undefined) {
      if (h.apiKey === ApiKey.API_VERSIONS) {
        this.#answer(refuseApiVersion(this.#deps.handlers, h.correlationId), request.length);
        return true;
      }
      const api = supportedApi(h.apiKey);
      const what = api === undefined ? `api ${h.apiKey}` : `${api.name} v${h.apiVersion}`;
      this.#close("unsupported", { apiKey: h.apiKey, apiVersion: h.apiVersion }, `${what} is not served`);
      return true;
    }
    const ctx = this.#ctx;
    ctx.responseBytes = 0;
    ctx.clientId = h.clientId;
    let reply: KafkaReply;
    this.#handling = true;
    try {
      reply = entry.handle(ctx, h);
    } catch (err) {
      this.#unanswerable(err, h);
      return !keep;
    } finally {
      this.#handling = false;
    }
    const security = this.#deps.security;
    if (security?.throttling === true) {
      const principal = ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL;
      reply = throttledReply(security.quotas, this.#conn, principal, h, frame.length, reply);
    }
    this.#answer(reply, request.length);
    if (this.#endAfterAnswer) {
      this.#endAfterAnswer = false;
      this.#conn.closeWhenAnswered();
    }
    return !keep;
  }

  /**
   * Over a connection limit: Kafka has no response that says so (every response is the request's
   * own), so the connection is closed with nothing written; the client backs off and retries.
   */
  refuse(_frame: Buffer, err: ConchError): void {
    this.#conn.limitedLog(
      "info",
      "refused",
      { code: err.codeName },
      `closing the connection: ${err.message}`,
    );
  }

  abort(reason: ConchError): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
  }

  closed(): void {
    this.abort(new ConchError(ErrorCode.CONNECTION_CLOSED, "the connection closed"));
  }

  #answer(reply: KafkaReply, frameBytes: number): void {
    if (!isPromise(reply) && this.#queue.length === 0) {
      if (reply !== null) this.#conn.write(reply);
      return;
    }
    const slot = this.#queue.push(this.#conn.begin(frameBytes, this.#ctx.responseBytes));
    if (!isPromise(reply)) {
      this.#queue.complete(slot, reply);
      return;
    }
    reply.then(
      (r) => this.#queue.complete(slot, r),
      (err: unknown) => this.#slotFailed(slot, err),
    );
  }

  #slotFailed(slot: ResponseSlot, err: unknown): void {
    this.#unanswerable(err);
    this.#queue.complete(slot, null);
  }

  /**
   * A request with no answer to give: the connection closes once those before it are answered. A
   * typed refusal (a body that does not decode) is the client's doing and logged as such; anything
   * else is a bug of ours, logged as an error.
   */
  #unanswerable(err: unknown, h?: KafkaRequestHeader): void {
    const fields = h === undefined ? { err } : { err, apiKey: h.apiKey, apiVersion: h.apiVersion };
    if (
      err instanceof ConchError &&
      err.code < ErrorCode.CONNECTION_CLOSED &&
      err.code !== ErrorCode.INTERNAL
    ) {
      this.#close("malformed", fields, err.message);
      return;
    }
    this.#conn.limitedLog("error", "unexpected", fields, "kafka request failed unexpectedly");
    this.#failed = true;
    this.#conn.closeWhenAnswered();
  }

  #close(key: string, fields: object, why: string): void {
    this.#conn.limitedLog("info", key, fields, `closing the kafka connection: ${why}`);
    this.#failed = true;
    this.#conn.closeWhenAnswered();
  }
}

function isPromise(reply: KafkaReply): reply is Promise<KafkaResponse | null> {
  return reply !== null && !Buffer.isBuffer(reply) && !Array.isArray(reply);
}

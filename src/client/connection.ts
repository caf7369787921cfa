/**
 * One TCP connection to a broker: the handshake, then many requests in flight at once, each
 * matched to its response by correlation id (responses to waiting requests may come back out of
 * order). The connection knows frames and correlation ids, nothing of topics.
 *
 * - Writes are queued and flushed once per microtask inside cork/uncork, so everything issued in
 *   one tick leaves in one writev. When `write()` returns false the rest waits for 'drain'.
 * - Responses go through the protocol's FrameParser, bounded by the handshake's maxFrameBytes.
 *   Reads go where the parser needs them (net's `onread`): straight into a large response being
 *   assembled, so a fetch's megabyte costs neither socket chunks nor a copy; small reads land in
 *   one scratch buffer and are copied out.
 * - One coarse timer per connection sweeps requests that outlived their deadline; a broker that
 *   stops answering is treated as gone: the connection is closed and every request on it fails.
 * - When the connection closes, every request in flight fails with a retriable CONNECTION_CLOSED.
 */
import net from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ConchError, ErrorCode } from "../format/errors.js";
import { FrameParser } from "../net/frame-parser.js";
import { microtask } from "../net/microtask.js";
import { SocketReads } from "../net/socket-reads.js";
import { JOIN_MAX_BYTES, joinBuffers } from "../net/socket-writes.js";
import { PROTOCOL_MAX_VERSION, PROTOCOL_MIN_VERSION } from "../protocol/api.js";
import { encodeStreamCancel } from "../protocol/fetch-stream.js";
import { hasResponseHeader, responseCorrelationId } from "../protocol/frame.js";
import {
  decodeHandshakeResponse,
  encodeHandshakeRequest,
  type HandshakeResponse,
} from "../protocol/handshake.js";
import { type BrokerAddress, formatAddress } from "./address.js";
import { abortedError, asConchError, connectionClosedError } from "./errors.js";
import { nextCorrelationId, PendingTable } from "./pending-table.js";
import { type SaslLogin, saslLogin } from "./sasl-login.js";
import { type ClientTlsOptions, tlsConnectOptions } from "./security-options.js";

export interface ConnectionOptions {
  clientId: string;
  /** Time allowed for TCP connect + handshake. */
  connectTimeoutMs: number;
  /** Time a request may wait for its response (plus its own `extraWaitMs`). */
  requestTimeoutMs: number;
  /** Connect with TLS (security-options.ts). */
  tls?: ClientTlsOptions | undefined;
  /** Log in after the handshake (checked by checkSaslOptions). */
  sasl?: SaslLogin | undefined;
}

/** Writes a whole request message for a correlation id; module functions, so no closure per request. */
export type Encoder<A> = (correlationId: number, arg: A) => Buffer;
/** Decodes a response frame; an error response throws the ConchError it carries. */
export type Decoder<T> = (frame: Buffer) => T;

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** Time the broker may legitimately hold the request (a long poll), added to the timeout. */
  extraWaitMs?: number | undefined;
}

/**
 * Told once how a request ended, in place of a promise (the hot requests: a producer's batches, a
 * fetcher's long polls, each with one listener for all its requests). `context` is what the caller
 * passed with the request. Called from the connection's read path: must not throw.
 */
export interface ResponseListener<T, C> {
  responded(value: T, context: C): void;
  requestFailed(err: ConchError, context: C): void;
}

interface Pending {
  readonly id: number;
  readonly decode: Decoder<unknown>;
  readonly listener: ResponseListener<unknown, unknown>;
  readonly context: unknown;
  /** Pushed back by every response of a stream. */
  deadline: number;
  readonly extraWaitMs: number;
  readonly signal: AbortSignal | undefined;
  /** A fetch stream: many responses, until an error response or a cancel. */
  readonly stream: boolean;
}

/**
 * One abort listener per signal per connection, however many requests use it (a consumer's fetches
 * all pass the same one); dropped by the sweep once no request uses it.
 */
interface SignalWatch {
  readonly listener: () => void;
  users: number;
}

/** The handshake response is tiny; nothing larger is accepted before it. */
const HANDSHAKE_MAX_FRAME_BYTES = 64 * 1024;
const NO_OPTIONS: RequestOptions = {};

export class Connection {
  readonly address: BrokerAddress;
  #socket: net.Socket;
  #options: ConnectionOptions;
  #parser = new FrameParser({ maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES });
  #reads: SocketReads;
  #pending = new PendingTable<Pending>();
  /** Fetch streams open: their ids stay taken while the ids wrap around. */
  #streams = 0;
  #watches = new Map<AbortSignal, SignalWatch>();
  #nextId = 1;
  /** Buffers to write, out[0, outCount); the array is kept and reused (slots cleared once written). */
  #out: Buffer[] = [];
  #outCount = 0;
  #flushQueued = false;
  #blocked = false;
  #closeError: ConchError | null = null;
  #sweep: NodeJS.Timeout;
  #onClose: Array<(err: ConchError) => void> = [];
  #handshake: HandshakeResponse | null = null;

  /** Connects, handshakes and resolves with a ready connection. */
  static async open(
    address: BrokerAddress,
    options: ConnectionOptions,
    signal?: AbortSignal,
  ): Promise<Connection> {
    const reads = new SocketReads();
    const socket = await connectSocket(address, options.connectTimeoutMs, signal, reads, options.tls);
    const conn = new Connection(address, socket, options, reads);
    const timer = setTimeout(
      () =>
        conn.close(new ConchError(ErrorCode.TIMEOUT, `handshake with ${formatAddress(address)} timed out`)),
      options.connectTimeoutMs,
    );
    try {
      const hs = await conn.request(
        encodeHandshakeRequest,
        { minVersion: PROTOCOL_MIN_VERSION, maxVersion: PROTOCOL_MAX_VERSION, clientId: options.clientId },
        decodeHandshakeResponse,
        signal === undefined ? NO_OPTIONS : { signal },
      );
      if (hs.version < PROTOCOL_MIN_VERSION || hs.version > PROTOCOL_MAX_VERSION) {
        throw new ConchError(ErrorCode.UNSUPPORTED_VERSION, `broker chose protocol version ${hs.version}`);
      }
      conn.#startSession(hs);
      if (options.sasl !== undefined) {
        const login = options.sasl;
        await saslLogin(
          (encode, arg, decode, o) => conn.request(encode, arg, decode, o),
          login,
          signal === undefined ? NO_OPTIONS : { signal },
        );
      }
      return conn;
    } catch (err) {
      conn.close(asConchError(err));
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private constructor(
    address: BrokerAddress,
    socket: net.Socket,
    options: ConnectionOptions,
    reads: SocketReads,
  ) {
    this.address = address;
    this.#socket = socket;
    this.#options = options;
    this.#reads = reads;
    reads.parser = this.#parser;
    reads.onRead = () => this.#onRead();
    reads.onFailure = (err) =>
      this.close(connectionClosedError(`bad response stream from ${formatAddress(address)}`, err));
    socket.on("drain", () => {
      this.#blocked = false;
      this.#flush();
    });
    socket.on("error", (err) => this.close(connectionClosedError(err.message, err)));
    socket.on("close", () => this.close(connectionClosedError(`${formatAddress(address)} went away`)));
    this.#sweep = setInterval(
      () => this.#expire(),
      Math.min(1000, Math.max(10, options.requestTimeoutMs / 4)),
    );
    this.#sweep.unref();
  }

  /** The broker's limits from the handshake. */
  get maxFrameBytes(): number {
    return this.#handshake?.maxFrameBytes ?? HANDSHAKE_MAX_FRAME_BYTES;
  }

  get maxBatchBytes(): number {
    return this.#handshake?.maxBatchBytes ?? 0;
  }

  get version(): number {
    return this.#handshake?.version ?? 0;
  }

  get closed(): boolean {
    return this.#closeError !== null;
  }

  /** Requests waiting for a response. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Registers a listener called once, with the reason, when the connection closes. */
  onClose(listener: (err: ConchError) => void): void {
    if (this.#closeError !== null) listener(this.#closeError);
    else this.#onClose.push(listener);
  }

  /** Sends a request and resolves with its decoded response. */
  request<A, T>(
    encode: Encoder<A>,
    arg: A,
    decode: Decoder<T>,
    options: RequestOptions = NO_OPTIONS,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.requestTo(encode, arg, decode, { responded: resolve, requestFailed: reject }, undefined, options);
    });
  }

  /**
   * Sends a request and tells `listener`, with `context`, how it ended: a response as soon as it
   * is read, a failure on a later tick (as a rejected promise's handlers would run), so never
   * inside this call or inside the abort() or close() that failed it. `tail` is sent right after
   * the encoded message, uncopied (a produce request's batches).
   */
  requestTo<A, T, C>(
    encode: Encoder<A>,
    arg: A,
    decode: Decoder<T>,
    listener: ResponseListener<T, C>,
    context: C,
    options: RequestOptions = NO_OPTIONS,
    tail?: Buffer,
  ): void {
    this.#start(encode, arg, decode, listener, context, options, tail, false);
  }

  /**
   * Opens a fetch stream (protocol/fetch-stream.ts): `listener.responded` is told of every response
   * until the stream fails (an error response, the connection closing, a timeout: no response for
   * the request timeout plus `options.extraWaitMs`) or `options.signal` aborts it, which also
   * cancels it on the broker. Returns the stream's id, for its credit; 0 when it was refused (the
   * listener is told why).
   */
  streamTo<A, T, C>(
    encode: Encoder<A>,
    arg: A,
    decode: Decoder<T>,
    listener: ResponseListener<T, C>,
    context: C,
    options: RequestOptions = NO_OPTIONS,
  ): number {
    return this.#start(encode, arg, decode, listener, context, options, undefined, true);
  }

  #start<A, T, C>(
    encode: Encoder<A>,
    arg: A,
    decode: Decoder<T>,
    listener: ResponseListener<T, C>,
    context: C,
    options: RequestOptions,
    tail: Buffer | undefined,
    stream: boolean,
  ): number {
    if (this.#closeError !== null) {
      refuse(listener, this.#closeError, context);
      return 0;
    }
    const signal = options.signal;
    if (signal?.aborted) {
      refuse(listener, abortedError(signal, "request"), context);
      return 0;
    }
    const id = this.#allocateId();
    let frame: Buffer;
    try {
      frame = encode(id, arg);
    } catch (err) {
      refuse(listener, asConchError(err), context);
      return 0;
    }
    const extraWaitMs = options.extraWaitMs ?? 0;
    this.#pending.add({
      id,
      decode,
      listener: listener as ResponseListener<unknown, unknown>,
      context,
      deadline: performance.now() + this.#options.requestTimeoutMs + extraWaitMs,
      extraWaitMs,
      signal,
      stream,
    });
    if (stream) this.#streams++;
    if (signal !== undefined) this.#watch(signal);
    this.#enqueue(frame, tail);
    return id;
  }

  #watch(signal: AbortSignal): void {
    const watch = this.#watches.get(signal);
    if (watch !== undefined) {
      watch.users++;
      return;
    }
    const listener = (): void => this.#aborted(signal);
    this.#watches.set(signal, { listener, users: 1 });
    signal.addEventListener("abort", listener, { once: true });
  }

  /**
   * A signal aborted: its requests fail now (their responses, if any come, are dropped), and its
   * streams are cancelled on the broker.
   */
  #aborted(signal: AbortSignal): void {
    this.#watches.delete(signal);
    for (const p of this.#pending.entries()) {
      if (p.signal !== signal) continue;
      this.#taken(p);
      if (p.stream && this.#closeError === null) this.send(encodeStreamCancel, p.id);
      refuse(p.listener, abortedError(signal, "request"), p.context);
    }
  }

  /** Removes a request from the table. */
  #taken(p: Pending): void {
    this.#pending.take(p.id);
    if (p.stream) this.#streams--;
  }

  /** A request with a signal settled. */
  #unwatch(p: Pending): void {
    const watch = p.signal === undefined ? undefined : this.#watches.get(p.signal);
    if (watch !== undefined) watch.users--;
  }

  /** Drops the listeners of signals that no request uses any more. */
  #pruneWatches(): void {
    for (const [signal, watch] of this.#watches) {
      if (watch.users > 0) continue;
      signal.removeEventListener("abort", watch.listener);
      this.#watches.delete(signal);
    }
  }

  /** Sends a request that gets no response (produce with acks = none). */
  send<A>(encode: Encoder<A>, arg: A, tail?: Buffer): void {
    if (this.#closeError !== null) throw this.#closeError;
    this.#enqueue(encode(this.#allocateId(), arg), tail);
  }

  /** Closes the connection; every request in flight fails with `reason` (CONNECTION_CLOSED by default). */
  close(reason: ConchError = connectionClosedError("closed by the client")): void {
    if (this.#closeError !== null) return;
    this.#closeError = reason;
    clearInterval(this.#sweep);
    this.#socket.destroy();
    this.#out = [];
    this.#outCount = 0;
    const pending = this.#pending.clear();
    this.#streams = 0;
    for (const p of pending) this.#settle(p, reason);
    for (const [signal, watch] of this.#watches) signal.removeEventListener("abort", watch.listener);
    this.#watches.clear();
    for (const listener of this.#onClose) listener(reason);
    this.#onClose = [];
  }

  #startSession(hs: HandshakeResponse): void {
    this.#handshake = hs;
    // Nothing but the handshake response can have arrived yet: the broker only ever answers.
    if (this.#parser.midFrame)
      throw new ConchError(ErrorCode.MALFORMED_REQUEST, "unexpected bytes after the handshake");
    this.#parser = new FrameParser({ maxFrameBytes: hs.maxFrameBytes });
    this.#reads.parser = this.#parser;
  }

  #allocateId(): number {
    let id = this.#nextId;
    // Past a lap of the ids, an open stream's id is still in use.
    while (this.#streams > 0 && this.#pending.get(id) !== undefined) id = nextCorrelationId(id);
    this.#nextId = nextCorrelationId(id);
    return id;
  }

  #enqueue(frame: Buffer, tail: Buffer | undefined): void {
    const out = this.#out;
    out[this.#outCount++] = frame;
    if (tail !== undefined && tail.length > 0) out[this.#outCount++] = tail;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      // Everything requested in the current operation, before the microtasks it queued run, goes
      // out in one write.
      microtask(this.#flushTask);
    }
  }

  #flushTask = (): void => {
    this.#flushQueued = false;
    this.#flush();
  };

  #flush(): void {
    const out = this.#out;
    const count = this.#outCount;
    if (this.#blocked || count === 0 || this.#closeError !== null) return;
    const socket = this.#socket;
    let i = 0;
    let total = 0;
    for (let k = 0; k < count; k++) total += out[k]!.length;
    if (count === 1 || total <= JOIN_MAX_BYTES) {
      // One buffer, or a few small ones joined: a plain write, without the corked writev's
      // bookkeeping (net/socket-writes.ts).
      const one = count === 1 ? out[0]! : joinBuffers(out, count, total);
      i = count;
      if (!socket.write(one)) this.#blocked = true;
    } else {
      socket.cork();
      while (i < count) {
        if (!socket.write(out[i++]!)) {
          this.#blocked = true;
          break;
        }
      }
      socket.uncork();
    }
    // What the socket did not take yet moves to the front, for 'drain'.
    out.copyWithin(0, i, count);
    out.fill(undefined as unknown as Buffer, count - i, count);
    this.#outCount = count - i;
  }

  /** Bytes arrived (already in the parser): dispatch every whole frame. */
  #onRead(): void {
    if (this.#closeError !== null) return;
    try {
      for (let frame = this.#parser.next(); frame !== null; frame = this.#parser.next())
        this.#dispatch(frame);
    } catch (err) {
      this.close(connectionClosedError(`bad response stream from ${formatAddress(this.address)}`, err));
    }
  }

  #dispatch(frame: Buffer): void {
    if (!hasResponseHeader(frame))
      throw new ConchError(ErrorCode.MALFORMED_REQUEST, "response frame too short");
    const id = responseCorrelationId(frame);
    const p = this.#pending.get(id);
    if (p === undefined) return; // its request was aborted or timed out
    if (!p.stream) this.#pending.take(id);
    let value: unknown;
    try {
      value = p.decode(frame);
    } catch (err) {
      // An error response ends a stream too.
      if (p.stream) this.#taken(p);
      this.#settle(p, asConchError(err));
      return;
    }
    if (p.stream) p.deadline = performance.now() + this.#options.requestTimeoutMs + p.extraWaitMs;
    else this.#unwatch(p);
    p.listener.responded(value, p.context);
  }

  /** A request failed: told on the next tick, never inside the abort() or close() that failed it. */
  #settle(p: Pending, err: ConchError): void {
    this.#unwatch(p);
    refuse(p.listener, err, p.context);
  }

  #expire(): void {
    if (this.#watches.size > 0) this.#pruneWatches();
    if (this.#pending.size === 0) return;
    const now = performance.now();
    for (const p of this.#pending.entries()) {
      if (p.deadline > now) continue;
      this.#taken(p);
      const ms = this.#options.requestTimeoutMs;
      this.#settle(
        p,
        new ConchError(ErrorCode.TIMEOUT, `no response from ${formatAddress(this.address)} in ${ms} ms`),
      );
      this.close(connectionClosedError(`${formatAddress(this.address)} stopped answering`));
      return;
    }
  }
}

/** Tells a listener of a failure on the next tick, as a rejected promise's handlers would run. */
function refuse<C>(listener: ResponseListener<never, C>, err: ConchError, context: C): void {
  process.nextTick(() => listener.requestFailed(err, context));
}

/** A connected socket, or a rejection after the timeout or abort. */
function connectSocket(
  address: BrokerAddress,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  reads: SocketReads,
  tlsOptions: ClientTlsOptions | undefined,
): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal, "connect"));
      return;
    }
    // TLS sockets cannot read through `onread`: their chunks go to the same parser via 'data'.
    const socket =
      tlsOptions === undefined
        ? net.connect({ host: address.host, port: address.port, noDelay: true, onread: reads.onread })
        : tlsConnect({
            ...tlsConnectOptions(tlsOptions, address.host),
            host: address.host,
            port: address.port,
          });
    if (tlsOptions !== undefined) socket.setNoDelay(true).on("data", reads.data);
    const fail = (err: ConchError): void => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error): void =>
      fail(
        tlsOptions !== undefined && isTlsError(err)
          ? new ConchError(
              ErrorCode.TLS_FAILED,
              `TLS with ${formatAddress(address)} failed: ${err.message}`,
              {
                cause: err,
              },
            )
          : connectionClosedError(`cannot connect to ${formatAddress(address)}: ${err.message}`, err),
      );
    const onAbort = (): void => fail(abortedError(signal, "connect"));
    const timer = setTimeout(
      () =>
        fail(connectionClosedError(`connect to ${formatAddress(address)} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
    };
    socket.once("error", onError);
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.once(tlsOptions === undefined ? "connect" : "secureConnect", () => {
      cleanup();
      resolve(socket);
    });
  });
}

/** A certificate or TLS protocol error (OpenSSL's codes, Node's ERR_TLS_* and ERR_SSL_*). */
function isTlsError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.includes("CERT") ||
    code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"
  );
}

/**
 * Keeps one live connection to one of the bootstrap brokers, on demand.
 *
 * A request made while connected goes straight to the connection. One made while disconnected
 * waits (up to the request timeout, or until its signal aborts) while the manager tries the
 * addresses in turn, backing off exponentially with jitter between failed rounds. The connection
 * is (re)made only while someone is waiting for it, so an idle client does not hammer a broker
 * that is down. Requests in flight when a connection drops fail with a retriable
 * CONNECTION_CLOSED; retrying them is the caller's decision (producers and consumers do).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { type BrokerAddress, formatAddress, parseAddress } from "./address.js";
import { Backoff, delay } from "./backoff.js";
import {
  Connection,
  type ConnectionOptions,
  type Decoder,
  type Encoder,
  type RequestOptions,
  type ResponseListener,
} from "./connection.js";
import { abortedError, asConchError, connectionClosedError } from "./errors.js";

export interface ConnectionManagerOptions extends ConnectionOptions {
  /** "host:port" addresses; any one of them will do. */
  brokers: readonly string[];
  reconnectBackoffMs: number;
  reconnectBackoffMaxMs: number;
  /** Called with every new connection, after its handshake. */
  onConnect?: ((conn: Connection) => void) | undefined;
  /** Called with every failed connection attempt (a leader's broker refusing: look for another). */
  onConnectError?: ((err: ConchError) => void) | undefined;
}

interface Waiter {
  resolve: (conn: Connection) => void;
  reject: (err: ConchError) => void;
}

/** Errors that no other broker or later attempt will cure. */
function isFatal(err: ConchError): boolean {
  return (
    err.code === ErrorCode.UNSUPPORTED_VERSION ||
    err.code === ErrorCode.ABORTED ||
    // Credentials and certificates do not get better by retrying (and a retry loop is a guesser).
    err.code === ErrorCode.AUTHENTICATION_FAILED ||
    err.code === ErrorCode.UNSUPPORTED_SASL_MECHANISM ||
    err.code === ErrorCode.ILLEGAL_SASL_STATE ||
    err.code === ErrorCode.TLS_FAILED
  );
}

export class ConnectionManager {
  #options: ConnectionManagerOptions;
  #addresses: BrokerAddress[];
  #nextAddress: number;
  #conn: Connection | null = null;
  #waiters = new Set<Waiter>();
  #connecting = false;
  #backoff: Backoff;
  #closed = false;
  #closing = new AbortController();
  #lastError: ConchError | null = null;

  constructor(options: ConnectionManagerOptions) {
    if (options.brokers.length === 0)
      throw new ConchError(ErrorCode.INVALID_REQUEST, "no broker addresses given");
    this.#options = options;
    this.#addresses = options.brokers.map(parseAddress);
    // Clients that share a list spread over it instead of all starting at its head.
    this.#nextAddress = Math.floor(Math.random() * this.#addresses.length);
    this.#backoff = new Backoff({
      initialMs: options.reconnectBackoffMs,
      maxMs: options.reconnectBackoffMaxMs,
    });
  }

  /** The live connection, or null. */
  get current(): Connection | null {
    const c = this.#conn;
    return c !== null && !c.closed ? c : null;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Why the last connection attempt failed, or the last connection closed; null once connected. */
  get lastError(): ConchError | null {
    return this.#lastError;
  }

  /** Sends a request on the live connection, waiting for one first if needed. */
  request<A, T>(encode: Encoder<A>, arg: A, decode: Decoder<T>, options?: RequestOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.requestTo(encode, arg, decode, { responded: resolve, requestFailed: reject }, undefined, options);
    });
  }

  /** `request` with a listener instead of a promise (Connection.requestTo). */
  requestTo<A, T, C>(
    encode: Encoder<A>,
    arg: A,
    decode: Decoder<T>,
    listener: ResponseListener<T, C>,
    context: C,
    options?: RequestOptions,
    tail?: Buffer,
  ): void {
    const c = this.current;
    if (c !== null) {
      c.requestTo(encode, arg, decode, listener, context, options, tail);
      return;
    }
    this.connection(options?.signal).then(
      (conn) => conn.requestTo(encode, arg, decode, listener, context, options, tail),
      (err: unknown) => listener.requestFailed(asConchError(err), context),
    );
  }

  /** Sends a request that gets no response, once connected. */
  send<A>(encode: Encoder<A>, arg: A, tail?: Buffer, signal?: AbortSignal): Promise<void> {
    const c = this.current;
    if (c !== null) {
      c.send(encode, arg, tail);
      return Promise.resolve();
    }
    return this.connection(signal).then((conn) => conn.send(encode, arg, tail));
  }

  /** A live connection: the current one, or the next one made, within the request timeout. */
  connection(signal?: AbortSignal): Promise<Connection> {
    if (this.#closed) return Promise.reject(connectionClosedError("the client is closed"));
    const c = this.current;
    if (c !== null) return Promise.resolve(c);
    if (signal?.aborted) return Promise.reject(abortedError(signal, "connect"));
    return new Promise<Connection>((resolve, reject) => {
      const ms = this.#options.requestTimeoutMs;
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#waiters.delete(waiter);
      };
      const waiter: Waiter = {
        resolve: (conn) => {
          done();
          resolve(conn);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      const onAbort = (): void => waiter.reject(abortedError(signal, "connect"));
      const timer = setTimeout(() => {
        // The last error is itself a "connection closed: ..." one: only its detail is repeated.
        const detail = this.#lastError?.message.replace(/^connection closed: /, "");
        const last = detail === undefined ? "" : ` (last attempt: ${detail})`;
        waiter.reject(connectionClosedError(`no broker reachable within ${ms} ms${last}`, this.#lastError));
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(waiter);
      this.#startConnecting();
    });
  }

  /** Closes the connection; waiting and in-flight requests fail with CONNECTION_CLOSED (or `err`). */
  close(err = connectionClosedError("the client is closed")): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    for (const w of [...this.#waiters]) w.reject(err);
    this.#conn?.close(err);
    this.#conn = null;
  }

  #startConnecting(): void {
    if (this.#connecting) return;
    this.#connecting = true;
    this.#connectLoop().finally(() => {
      this.#connecting = false;
      // A waiter may have arrived just as the loop gave up.
      if (this.#waiters.size > 0 && !this.#closed && this.current === null) this.#startConnecting();
    });
  }

  async #connectLoop(): Promise<void> {
    const signal = this.#closing.signal;
    while (!this.#closed && this.#waiters.size > 0) {
      // One round: every address once, starting where the last round stopped.
      for (let i = 0; i < this.#addresses.length && !this.#closed; i++) {
        const address = this.#addresses[this.#nextAddress]!;
        this.#nextAddress = (this.#nextAddress + 1) % this.#addresses.length;
        let conn: Connection;
        try {
          conn = await Connection.open(address, this.#options, signal);
        } catch (err) {
          const e = asConchError(err);
          this.#lastError = e;
          this.#options.onConnectError?.(e);
          if (isFatal(e) && !this.#closed) for (const w of [...this.#waiters]) w.reject(e);
          continue;
        }
        if (this.#closed) {
          conn.close();
          return;
        }
        this.#adopt(conn);
        return;
      }
      if (this.#closed || this.#waiters.size === 0) return;
      try {
        await delay(this.#backoff.next(), signal, () => connectionClosedError("the client is closed"));
      } catch {
        return;
      }
    }
  }

  #adopt(conn: Connection): void {
    this.#backoff.reset();
    this.#lastError = null;
    this.#conn = conn;
    conn.onClose((err) => {
      if (this.#conn === conn) this.#conn = null;
      this.#lastError = err;
    });
    this.#options.onConnect?.(conn);
    for (const w of [...this.#waiters]) w.resolve(conn);
  }

  /** For messages: the addresses this manager uses. */
  describe(): string {
    return this.#addresses.map(formatAddress).join(", ");
  }
}

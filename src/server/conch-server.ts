/**
 * The native protocol's server: a Transport (src/net/) and its listeners, each connection with a
 * NativeSession, shutting down gracefully. It serves a Broker it does not own: whoever opened the
 * broker closes it, after the server.
 *
 *   const server = new ConchServer(broker, { logger });
 *   const { port } = await server.listen(0, "127.0.0.1");
 *   ...
 *   await server.close();
 *   await broker.close();
 *
 * `listen` starts the listener named "conch"; `addListener` adds more (TLS on another port, say),
 * each with its own name for logs and metrics, all under the same bounds.
 */
import type { AddressInfo } from "node:net";
import type { TlsOptions } from "node:tls";
import { type Logger, pino } from "pino";
import type { Broker } from "../broker/broker.js";
import type { FramedConnection } from "../net/framed-connection.js";
import { Listener } from "../net/listener.js";
import type { SessionFactory } from "../net/session.js";
import { Transport } from "../net/transport.js";
import { LogLimiter } from "../storage/log-limiter.js";
import type { BrokerSecurity } from "./broker-security.js";
import { defaultHandlers } from "./dispatch.js";
import { NativeSession } from "./native-session.js";
import { type ConchServerOptions, resolveLimits, type ServerLimits } from "./server-options.js";

/** The name of the listener `listen` starts. */
export const NATIVE_LISTENER = "conch";
/** The name of the native protocol's TLS listener (`listenTls`). */
export const NATIVE_TLS_LISTENER = "conch-tls";

export class ConchServer {
  readonly limits: ServerLimits;
  /** Shared by every listener of this server, and by the other front-ends' listeners. */
  readonly transport: Transport;
  #broker: Broker;
  #logger: Logger;
  #security: BrokerSecurity | null;
  #openSession: SessionFactory;
  #listeners = new Map<string, Listener>();
  #closing: Promise<void> | null = null;

  constructor(broker: Broker, options: ConchServerOptions = {}) {
    this.#broker = broker;
    this.#security = options.security ?? null;
    this.limits = resolveLimits(broker.config, options);
    this.#logger = (options.logger ?? pino({ enabled: false })).child({ component: "server" });
    this.transport = new Transport(this.limits, {
      logger: this.#logger,
      lines: new LogLimiter(),
      releaseMemory: options.releaseMemory,
    });
    const handlers = options.handlers ?? defaultHandlers();
    const limits = this.limits;
    const security = options.security ?? null;
    this.#openSession = (conn) => new NativeSession(conn, broker, handlers, limits, security);
    this.addListener(NATIVE_LISTENER);
  }

  /**
   * A listener named `name`, not yet listening; with `tls`, it serves TLS. Its connections speak the
   * native protocol unless `openSession` gives another protocol's session (the Kafka front-end's),
   * under the same bounds and shutdown. Throws when the name is taken.
   */
  addListener(name: string, tls?: TlsOptions, openSession: SessionFactory = this.#openSession): Listener {
    if (this.#listeners.has(name)) throw new Error(`a listener named ${name} exists already`);
    const options = { name, openSession };
    const listener = new Listener(this.transport, tls === undefined ? options : { ...options, tls });
    this.#listeners.set(name, listener);
    return listener;
  }

  /** The listener named `name`, if any. */
  listener(name: string): Listener | undefined {
    return this.#listeners.get(name);
  }

  /** Every listener, by name. */
  listeners(): Listener[] {
    return [...this.#listeners.values()];
  }

  /** Starts the "conch" listener; port 0 picks a free port. Defaults to the broker config's host and port. */
  listen(
    port: number = this.#broker.config.port,
    host: string = this.#broker.config.host,
  ): Promise<AddressInfo> {
    return this.#native().listen(port, host);
  }

  /**
   * Starts the "conch-tls" listener with the security's TLS material. Defaults to the broker
   * config's TLS port and host (--tls-host, else --host).
   */
  listenTls(
    port: number = this.#broker.config.tlsPort,
    host: string = this.#broker.config.tlsHost ?? this.#broker.config.host,
  ): Promise<AddressInfo> {
    const tls = this.#security?.tlsOptions() ?? null;
    if (tls === null) throw new Error("the server has no TLS material (--tls-cert, --tls-key)");
    return (this.listener(NATIVE_TLS_LISTENER) ?? this.addListener(NATIVE_TLS_LISTENER, tls)).listen(
      port,
      host,
    );
  }

  /**
   * Reads the TLS files and the users again (SIGHUP): every TLS listener serves new handshakes with
   * the new certificate; open connections keep theirs. A bad file is logged, the old material kept.
   */
  async reloadSecurity(): Promise<void> {
    const options = (await this.#security?.reload()) ?? null;
    if (options === null) return;
    for (const listener of this.#listeners.values()) if (listener.tls) listener.setSecureContext(options);
  }

  /** The "conch" listener's address. Throws before listen() has completed. */
  address(): AddressInfo {
    return this.#native().address();
  }

  /** Connections open now, on every listener. */
  get connectionCount(): number {
    return this.transport.connections.size;
  }

  /**
   * Response bytes held for all connections now (requests in progress with the responses they may
   * answer with, and responses not yet taken by the kernel), against maxQueuedResponseBytes.
   */
  get queuedResponseBytes(): number {
    return this.transport.budget.queuedBytes;
  }

  /** The open connections of every listener, for tests and diagnostics. */
  connections(): FramedConnection[] {
    return [...this.transport.connections];
  }

  /**
   * Stops accepting, lets the requests in flight finish (long polls are woken and answer with what
   * they have), then closes the connections. Connections still busy after `shutdownTimeoutMs` are
   * dropped. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const stopped = Promise.all(this.listeners().map((l) => l.close()));
    await this.transport.shutdown();
    await stopped;
    this.transport.stop();
    this.#logger.info("server closed");
  }

  #native(): Listener {
    return this.#listeners.get(NATIVE_LISTENER)!;
  }
}

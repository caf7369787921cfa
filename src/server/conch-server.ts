/**
 * The TCP listener: accepts connections (up to the limit), hands each to a Connection, and shuts
 * down gracefully. It serves a Broker it does not own: whoever opened the broker closes it, after
 * the server.
 *
 *   const server = new ConchServer(broker, { logger });
 *   const { port } = await server.listen(0, "127.0.0.1");
 *   ...
 *   await server.close();
 *   await broker.close();
 */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { type Logger, pino } from "pino";
import type { Broker } from "../broker/broker.js";
import { FramePool } from "../protocol/frame-pool.js";
import { SCRATCH_READ_BYTES, SocketReads } from "../protocol/socket-reads.js";
import { LogLimiter } from "../storage/log-limiter.js";
import { Admission } from "./admission.js";
import { adoptSocket } from "./adopt-socket.js";
import { Connection } from "./connection.js";
import { ConnectionSweep } from "./connection-sweep.js";
import { defaultHandlers } from "./dispatch.js";
import type { HandlerTable } from "./handler.js";
import { ResponseBudget } from "./response-budget.js";
import { type ConchServerOptions, resolveLimits, type ServerLimits } from "./server-options.js";

/** Pooled request frames: 32 KiB to 1 MiB, at most 4 free per size (under 8 MiB held). */
const FRAME_POOL = { minBytes: 32 << 10, maxBytes: 1 << 20, maxFreePerSize: 4 };
/** releaseMemory runs this long after a release (more connections tend to go together)... */
const RELEASE_DELAY_MS = 1000;
/** ...and at most this often, a full collection being a pause of its own. */
const RELEASE_EVERY_MS = 10_000;

export class ConchServer {
  readonly limits: ServerLimits;
  #broker: Broker;
  #logger: Logger;
  #handlers: HandlerTable;
  #server: Server;
  #connections = new Set<Connection>();
  #admission: Admission;
  #budget: ResponseBudget;
  #sweep: ConnectionSweep;
  #releaseTimer: NodeJS.Timeout | null = null;
  #logLimiter = new LogLimiter();
  #lastRelease = Number.NEGATIVE_INFINITY;
  #nextId = 1;
  #closing: Promise<void> | null = null;
  /** Every connection reads small chunks into this one buffer and copies them out at once. */
  #scratch = Buffer.allocUnsafe(SCRATCH_READ_BYTES);
  #frames = new FramePool(FRAME_POOL);

  constructor(broker: Broker, options: ConchServerOptions = {}) {
    this.#broker = broker;
    this.limits = resolveLimits(broker.config, options);
    this.#logger = (options.logger ?? pino({ enabled: false })).child({ component: "server" });
    this.#handlers = options.handlers ?? defaultHandlers();
    this.#admission = new Admission(this.limits);
    this.#budget = new ResponseBudget(this.limits.maxQueuedResponseBytes, this.limits.maxFetchBytes);
    const release = options.releaseMemory;
    if (release !== undefined) this.#budget.onReleased = () => this.#scheduleRelease(release);
    this.#sweep = new ConnectionSweep(Math.min(this.limits.idleTimeoutMs, this.limits.frameTimeoutMs));
    // allowHalfOpen: a client that ends its side still gets the answers to what it sent.
    // pauseOnConnect: nothing is read before the socket is adopted (adopt-socket.ts).
    this.#server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (socket) =>
      this.#accept(socket),
    );
    this.#server.on("error", (err) => this.#logger.error({ err }, "server error"));
  }

  /** Starts listening; port 0 picks a free port. Defaults to the broker config's host and port. */
  listen(
    port: number = this.#broker.config.port,
    host: string = this.#broker.config.host,
  ): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#server.once("error", onError);
      this.#server.listen(port, host, () => {
        this.#server.off("error", onError);
        const address = this.address();
        this.#logger.debug({ host: address.address, port: address.port }, "listening");
        this.#sweep.start(this.#connections);
        resolve(address);
      });
    });
  }

  /** The address listened on. Throws before listen() has completed. */
  address(): AddressInfo {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("the server is not listening");
    return address;
  }

  /** Connections open now. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /**
   * Response bytes held for all connections now (requests in progress with the responses they may
   * answer with, and responses not yet taken by the kernel), against maxQueuedResponseBytes.
   */
  get queuedResponseBytes(): number {
    return this.#budget.queuedBytes;
  }

  /** The open connections, for tests and diagnostics. */
  connections(): Connection[] {
    return [...this.#connections];
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
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const connections = [...this.#connections];
    this.#logger.info({ connections: connections.length }, "shutting down");
    const drained = Promise.all(connections.map((c) => c.shutdown()));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.limits.shutdownTimeoutMs);
    });
    const late = await Promise.race([drained.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late) {
      this.#logger.warn(
        { connections: this.#connections.size },
        "dropping connections still busy at shutdown",
      );
      for (const c of this.#connections) c.destroy();
    }
    await stopped;
    this.#sweep.stop();
    if (this.#releaseTimer !== null) clearTimeout(this.#releaseTimer);
    this.#logger.info("server closed");
  }

  /** Calls `release` a second from now, unless it ran less than RELEASE_EVERY_MS ago. */
  #scheduleRelease(release: () => void): void {
    if (this.#releaseTimer !== null) return;
    const wait = Math.max(RELEASE_DELAY_MS, this.#lastRelease + RELEASE_EVERY_MS - performance.now());
    this.#releaseTimer = setTimeout(() => {
      this.#releaseTimer = null;
      this.#lastRelease = performance.now();
      release();
    }, wait);
    this.#releaseTimer.unref();
  }

  #accept(accepted: Socket): void {
    const reads = new SocketReads(this.#scratch, { borrow: true });
    const { socket, onread } = adoptSocket(accepted, reads);
    if (this.#closing !== null) {
      socket.destroy();
      return;
    }
    const ip = socket.remoteAddress ?? "";
    const admitted = this.#admission.admit(ip);
    if (admitted === null) {
      socket.destroy();
      return;
    }
    const conn = new Connection(this.#nextId++, socket, {
      broker: this.#broker,
      handlers: this.#handlers,
      limits: this.limits,
      logger: this.#logger,
      refusal: admitted.refusal,
      reads: onread ? reads : null,
      pool: this.#frames,
      budget: this.#budget,
      clock: this.#sweep,
      logLimiter: this.#logLimiter,
    });
    this.#connections.add(conn);
    conn.closed.then(() => {
      this.#connections.delete(conn);
      this.#admission.release(ip, admitted);
    });
  }
}

/**
 * What every listener of a broker shares (listener.ts): the connection limits (Admission), the
 * bound on response bytes of all connections (ResponseBudget), one sweep timer for the timeouts,
 * the pool of large frames and the scratch buffer small reads land in, and the limiter of log
 * lines bad clients can repeat. A plain listener on loopback, a TLS one and the Kafka ones all
 * count against the same bounds.
 */
import type { Logger } from "pino";
import { Admission } from "./admission.js";
import { ConnectionSweep } from "./connection-sweep.js";
import { FramePool } from "./frame-pool.js";
import type { FramedConnection, LineLimiter } from "./framed-connection.js";
import { ResponseBudget } from "./response-budget.js";
import { SCRATCH_READ_BYTES } from "./socket-reads.js";
import type { TransportLimits } from "./transport-limits.js";

/** Pooled request frames: 32 KiB to 1 MiB, at most 4 free per size (under 8 MiB held). */
const FRAME_POOL = { minBytes: 32 << 10, maxBytes: 1 << 20, maxFreePerSize: 4 };
/** releaseMemory runs this long after a release (more connections tend to go together)... */
const RELEASE_DELAY_MS = 1000;
/** ...and at most this often, a full collection being a pause of its own. */
const RELEASE_EVERY_MS = 10_000;

export interface TransportOptions {
  logger: Logger;
  lines: LineLimiter;
  /**
   * Called (at most every 10 s, a second after the fact) when connections that held many response
   * bytes have gone, to give that memory back.
   */
  releaseMemory?: (() => void) | undefined;
}

export class Transport {
  readonly limits: TransportLimits;
  readonly logger: Logger;
  readonly lines: LineLimiter;
  readonly admission: Admission;
  readonly budget: ResponseBudget;
  readonly sweep: ConnectionSweep;
  readonly frames = new FramePool(FRAME_POOL);
  /** Every connection reads small chunks into this one buffer and copies them out at once. */
  readonly scratch = Buffer.allocUnsafe(SCRATCH_READ_BYTES);
  /** The open connections of every listener. */
  readonly connections = new Set<FramedConnection>();
  #nextId = 1;
  #releaseTimer: NodeJS.Timeout | null = null;
  #lastRelease = Number.NEGATIVE_INFINITY;

  constructor(limits: TransportLimits, options: TransportOptions) {
    this.limits = limits;
    this.logger = options.logger;
    this.lines = options.lines;
    this.admission = new Admission(limits);
    this.budget = new ResponseBudget(limits.maxQueuedResponseBytes, limits.maxFetchBytes);
    const release = options.releaseMemory;
    if (release !== undefined) this.budget.onReleased = () => this.#scheduleRelease(release);
    this.sweep = new ConnectionSweep(Math.min(limits.idleTimeoutMs, limits.frameTimeoutMs));
  }

  /** The next connection's id, unique across listeners (for logs). */
  nextId(): number {
    return this.#nextId++;
  }

  /** A listener started: the sweep runs from now on. */
  started(): void {
    this.sweep.start(this.connections);
  }

  /**
   * Lets the requests in flight on every connection finish (waits are woken and answer with what
   * they have), then closes the connections; those still busy after `shutdownTimeoutMs` are dropped.
   */
  async shutdown(): Promise<void> {
    const connections = [...this.connections];
    this.logger.info({ connections: connections.length }, "shutting down");
    const drained = Promise.all(connections.map((c) => c.shutdown()));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.limits.shutdownTimeoutMs);
    });
    const late = await Promise.race([drained.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late) {
      this.logger.warn({ connections: this.connections.size }, "dropping connections still busy at shutdown");
      for (const c of this.connections) c.destroy();
    }
  }

  /** Stops the timers, once the listeners are closed. */
  stop(): void {
    this.sweep.stop();
    if (this.#releaseTimer !== null) clearTimeout(this.#releaseTimer);
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
}

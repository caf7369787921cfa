/**
 * What a ConchServer can be tuned with, and the defaults. The broker's own config supplies the
 * frame and batch limits, the connection limits, the response memory cap and the timeouts unless
 * these override them.
 */
import type { Logger } from "pino";
import { type BrokerConfig, maxFrameBytes } from "../broker/broker-config.js";
import { MAX_TIMER_MS } from "../format/duration.js";
import type { TransportLimits } from "../net/transport-limits.js";
import type { BrokerSecurity } from "./broker-security.js";
import type { HandlerTable } from "./handler.js";

export interface ConchServerOptions {
  /** Where the server logs; silent when absent. */
  logger?: Logger;
  /** Connections served at once; later ones are refused with TOO_MANY_CONNECTIONS. */
  maxConnections?: number;
  /** Connections served at once from one IP address; later ones are refused likewise. */
  maxConnectionsPerIp?: number;
  /**
   * Per connection, the bound on bytes of requests in progress (their frames, plus the response a
   * fetch may return) plus responses written but not yet taken by the kernel. Over it, the
   * connection stops reading requests until responses drain. Default 64 MiB.
   */
  maxInflightBytes?: number;
  /**
   * The same bound for all connections together: over it, every connection stops starting fetches
   * (and streams stop pushing) until responses drain. Default: the broker's maxQueuedResponseBytes.
   */
  maxQueuedResponseBytes?: number;
  /** A fetch's maxBytes is capped to this. Default 16 MiB. */
  maxFetchBytes?: number;
  /** A connection that has not completed its handshake by then is closed. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** A connection with no request for this long and nothing in flight is closed. */
  idleTimeoutMs?: number;
  /** A connection that started a frame and has not sent all of it this long after is closed. */
  frameTimeoutMs?: number;
  /** close() waits this long for requests in progress before it drops the connections. Default 5 s. */
  shutdownTimeoutMs?: number;
  /**
   * Called (at most every 10 s, a second after the fact) when connections that held many response
   * bytes have gone, to give that memory back: `conch broker` runs a full collection. Without it
   * the buffers are freed only when the next allocations start a collection.
   */
  releaseMemory?: () => void;
  /**
   * TLS material, users and login rules shared by the listeners (docs/security.md); without it no
   * connection can log in and none needs to.
   */
  security?: BrokerSecurity;
  /** The dispatch table; default `defaultHandlers()`. */
  handlers?: HandlerTable;
}

/** The transport's bounds (src/net/), and what only the native protocol's handlers use. */
export interface ServerLimits extends TransportLimits {
  readonly maxBatchBytes: number;
  readonly handshakeTimeoutMs: number;
}

const MiB = 1024 * 1024;
/** Below a socket's own buffering the in-flight bound would stall every connection. */
const MIN_INFLIGHT_BYTES = 64 * 1024;
const DURATIONS: ReadonlySet<string> = new Set([
  "handshakeTimeoutMs",
  "idleTimeoutMs",
  "frameTimeoutMs",
  "shutdownTimeoutMs",
]);

export function resolveLimits(config: BrokerConfig, options: ConchServerOptions): ServerLimits {
  const limits: ServerLimits = {
    maxFrameBytes: maxFrameBytes(config),
    maxBatchBytes: config.maxBatchBytes,
    maxConnections: options.maxConnections ?? config.maxConnections,
    maxConnectionsPerIp: options.maxConnectionsPerIp ?? config.maxConnectionsPerIp,
    maxInflightBytes: Math.max(MIN_INFLIGHT_BYTES, options.maxInflightBytes ?? 64 * MiB),
    maxQueuedResponseBytes: Math.max(
      MIN_INFLIGHT_BYTES,
      options.maxQueuedResponseBytes ?? config.maxQueuedResponseBytes,
    ),
    maxFetchBytes: options.maxFetchBytes ?? 16 * MiB,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    idleTimeoutMs: options.idleTimeoutMs ?? config.idleTimeoutMs,
    frameTimeoutMs: options.frameTimeoutMs ?? config.frameTimeoutMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
  };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`server option ${key} must be a non-negative integer`);
    // Node fires a longer timer after 1 ms (format/duration.ts).
    if (DURATIONS.has(key) && (value < 1 || value > MAX_TIMER_MS))
      throw new RangeError(`server option ${key} must be from 1 to ${MAX_TIMER_MS} ms`);
  }
  // A fetch starts only when its largest answer fits in the shared bound (response-budget.ts).
  if (limits.maxQueuedResponseBytes < limits.maxFetchBytes) {
    throw new RangeError(
      `server option maxQueuedResponseBytes (${limits.maxQueuedResponseBytes}) must be at least maxFetchBytes (${limits.maxFetchBytes})`,
    );
  }
  return limits;
}

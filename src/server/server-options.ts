/**
 * What a ConchServer can be tuned with, and the defaults. The broker's own config supplies the
 * frame and batch limits and the connection limit unless these override them.
 */
import type { Logger } from "pino";
import { type BrokerConfig, maxFrameBytes } from "../broker/broker-config.js";
import type { HandlerTable } from "./handler.js";

export interface ConchServerOptions {
  /** Where the server logs; silent when absent. */
  logger?: Logger;
  /** Connections served at once; later ones are refused with TOO_MANY_CONNECTIONS. */
  maxConnections?: number;
  /**
   * Per connection, the bound on bytes of requests in progress (their frames, plus the response a
   * fetch may return) plus responses written but not yet taken by the kernel. Over it, the
   * connection stops reading requests until responses drain. Default 64 MiB.
   */
  maxInflightBytes?: number;
  /** A fetch's maxBytes is capped to this. Default 16 MiB. */
  maxFetchBytes?: number;
  /** A connection that has not completed its handshake by then is closed. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** close() waits this long for requests in progress before it drops the connections. Default 5 s. */
  shutdownTimeoutMs?: number;
  /** The dispatch table; default `defaultHandlers()`. */
  handlers?: HandlerTable;
}

export interface ServerLimits {
  readonly maxFrameBytes: number;
  readonly maxBatchBytes: number;
  readonly maxConnections: number;
  readonly maxInflightBytes: number;
  readonly maxFetchBytes: number;
  readonly handshakeTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}

const MiB = 1024 * 1024;
/** Below a socket's own buffering the in-flight bound would stall every connection. */
const MIN_INFLIGHT_BYTES = 64 * 1024;

export function resolveLimits(config: BrokerConfig, options: ConchServerOptions): ServerLimits {
  const limits: ServerLimits = {
    maxFrameBytes: maxFrameBytes(config),
    maxBatchBytes: config.maxBatchBytes,
    maxConnections: options.maxConnections ?? config.maxConnections,
    maxInflightBytes: Math.max(MIN_INFLIGHT_BYTES, options.maxInflightBytes ?? 64 * MiB),
    maxFetchBytes: options.maxFetchBytes ?? 16 * MiB,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
  };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`server option ${key} must be a non-negative integer`);
  }
  return limits;
}

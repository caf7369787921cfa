/**
 * What the transport bounds, for every listener of a broker alike. The server resolves them from
 * the broker's config and its own options (server/server-options.ts).
 */
export interface TransportLimits {
  readonly maxFrameBytes: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
  /** Per connection: bytes of requests in progress (with their responses) and unsent responses. */
  readonly maxInflightBytes: number;
  /** The same, for all connections of all listeners together (response-budget.ts). */
  readonly maxQueuedResponseBytes: number;
  /** The largest response one request may answer with: the room a large response needs to start. */
  readonly maxFetchBytes: number;
  readonly idleTimeoutMs: number;
  readonly frameTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}

/**
 * Requests a connection may have in flight at once, whatever their size. Without it, tiny
 * pipelined long polls (a few dozen bytes each, waiting for minutes) pile up by the million.
 */
export const MAX_INFLIGHT_REQUESTS = 1000;
/** The least a request in flight counts against the byte bound, so small ones are not free. */
export const MIN_REQUEST_COST = 4096;
/** A large response let through a full ResponseBudget (its connection held nothing) is cut to this. */
export const MIN_FETCH_BYTES = 64 * 1024;

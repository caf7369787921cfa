/** Client-wide settings, their defaults, and the checks every options object goes through. */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ConnectionManagerOptions } from "./connection-manager.js";

export interface ClientOptions {
  /** Bootstrap addresses, "host:port"; the client connects to any one of them. */
  brokers: readonly string[];
  /** Sent in the handshake; shows up in the broker's logs. Default "conch-client". */
  clientId?: string;
  /** TCP connect + handshake limit. Default 10 s. */
  connectTimeoutMs?: number;
  /** How long a request may wait for a connection, and then for its response. Default 30 s. */
  requestTimeoutMs?: number;
  /** First reconnect backoff step; doubles up to `reconnectBackoffMaxMs`, with jitter. Default 50 ms. */
  reconnectBackoffMs?: number;
  /** Default 2 s. */
  reconnectBackoffMaxMs?: number;
}

export function connectionManagerOptions(o: ClientOptions): ConnectionManagerOptions {
  return {
    brokers: [...o.brokers],
    clientId: o.clientId ?? "conch-client",
    connectTimeoutMs: integerOption("connectTimeoutMs", o.connectTimeoutMs, 10_000, 1),
    requestTimeoutMs: integerOption("requestTimeoutMs", o.requestTimeoutMs, 30_000, 1),
    reconnectBackoffMs: integerOption("reconnectBackoffMs", o.reconnectBackoffMs, 50, 1),
    reconnectBackoffMaxMs: integerOption("reconnectBackoffMaxMs", o.reconnectBackoffMaxMs, 2_000, 1),
  };
}

/** `value` if given (an integer in [min, max]), else `fallback`. */
export function integerOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConchError(
      ErrorCode.INVALID_REQUEST,
      `${name} must be an integer in [${min}, ${max}], not ${value}`,
    );
  }
  return value;
}

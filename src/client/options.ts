/** Client-wide settings, their defaults, and the checks every options object goes through. */
import { MAX_TIMER_MS } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ConnectionManagerOptions } from "./connection-manager.js";
import { type ClientSaslOptions, type ClientTlsOptions, checkSaslOptions } from "./security-options.js";

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
  /** Connect with TLS (docs/security.md); `{}` trusts the system's CAs. */
  tls?: ClientTlsOptions;
  /** Log in with SASL after connecting. */
  sasl?: ClientSaslOptions;
}

export function connectionManagerOptions(o: ClientOptions): ConnectionManagerOptions {
  return {
    brokers: [...o.brokers],
    clientId: o.clientId ?? "conch-client",
    connectTimeoutMs: durationOption("connectTimeoutMs", o.connectTimeoutMs, 10_000, 1),
    requestTimeoutMs: durationOption("requestTimeoutMs", o.requestTimeoutMs, 30_000, 1),
    reconnectBackoffMs: durationOption("reconnectBackoffMs", o.reconnectBackoffMs, 50, 1),
    reconnectBackoffMaxMs: durationOption("reconnectBackoffMaxMs", o.reconnectBackoffMaxMs, 2_000, 1),
    tls: o.tls,
    sasl: o.sasl === undefined ? undefined : checkSaslOptions(o.sasl),
  };
}

/**
 * `value` if given (an integer in [min, max]), else `fallback`; anything else is a ConchError
 * INVALID_CONFIG naming the option, thrown when the client, producer or consumer is made.
 */
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
      ErrorCode.INVALID_CONFIG,
      `${name} must be an integer in [${min}, ${max}], not ${describe(value)}`,
    );
  }
  return value;
}

/**
 * A duration in ms that becomes a timer: an integer in [min, max], and never above Node's timer
 * ceiling, past which a timer fires after 1 ms instead.
 */
export function durationOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min = 0,
  max = MAX_TIMER_MS,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    const ceiling = max === MAX_TIMER_MS ? ", the longest a Node timer can wait" : "";
    throw new ConchError(
      ErrorCode.INVALID_CONFIG,
      `${name} must be a whole number of ms from ${min} to ${max}${ceiling}, not ${describe(value)}`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

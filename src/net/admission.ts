/**
 * Which connections the server serves: at most `maxConnections` in all and `maxConnectionsPerIp`
 * from one address. One over either limit is refused: its first request is answered
 * TOO_MANY_CONNECTIONS and it closes. Beyond MAX_REFUSING being refused at once, new ones are
 * dropped unanswered, so a flood of connections costs a refusal each only up to a point.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { TransportLimits } from "./transport-limits.js";

const MAX_REFUSING = 64;

/** What `admit` decided: serve (refusal null), refuse with the error, or drop. */
export type Admitted = { refusal: ConchError | null } | null;

export class Admission {
  #limits: TransportLimits;
  #served = 0;
  #refusing = 0;
  /** Connections served by address; an address leaves the map with its last connection. */
  #perIp = new Map<string, number>();

  constructor(limits: TransportLimits) {
    this.#limits = limits;
  }

  /** Decides for a new connection from `ip`; each non-null answer is matched by one `release`. */
  admit(ip: string): Admitted {
    const fromIp = this.#perIp.get(ip) ?? 0;
    let why: string | null = null;
    if (this.#served >= this.#limits.maxConnections) {
      why = `the broker serves at most ${this.#limits.maxConnections} connections`;
    } else if (fromIp >= this.#limits.maxConnectionsPerIp) {
      why = `the broker serves at most ${this.#limits.maxConnectionsPerIp} connections from one address`;
    }
    if (why === null) {
      this.#served++;
      this.#perIp.set(ip, fromIp + 1);
      return { refusal: null };
    }
    if (this.#refusing >= MAX_REFUSING) return null;
    this.#refusing++;
    return { refusal: new ConchError(ErrorCode.TOO_MANY_CONNECTIONS, why) };
  }

  /** The connection `admit` answered for has closed. */
  release(ip: string, admitted: { refusal: ConchError | null }): void {
    if (admitted.refusal !== null) {
      this.#refusing--;
      return;
    }
    this.#served--;
    const left = (this.#perIp.get(ip) ?? 1) - 1;
    if (left === 0) this.#perIp.delete(ip);
    else this.#perIp.set(ip, left);
  }
}

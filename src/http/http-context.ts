/**
 * What the HTTP port serves from: the broker once it is open (the port starts before it, so
 * /healthz answers during a long recovery and /readyz says why it is not ready yet), and the
 * client listeners the runner registers, with their connection counts.
 */
import type { Broker } from "../broker/broker.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { HttpAuthSource } from "./http-access.js";
import type { SecurityAdmin } from "./security-routes.js";

export interface ListenerProbe {
  /** Whether it accepts connections now. */
  listening(): boolean;
  /** Connections open now. */
  connections(): number;
}

export class HttpContext {
  readonly startedAtMs = Date.now();
  readonly listeners = new Map<string, ListenerProbe>();
  /** Users, ACLs and quotas of the running broker, once its security is open (security-routes.ts). */
  security: (SecurityAdmin & HttpAuthSource) | null = null;
  #broker: Broker | null = null;
  #stopping = false;

  get broker(): Broker | null {
    return this.#stopping ? null : this.#broker;
  }

  /** The broker, or SHUTTING_DOWN (503) while it is not open (recovering, or stopping). */
  requireBroker(): Broker {
    const broker = this.broker;
    if (broker === null) {
      const why = this.#stopping ? "the broker is shutting down" : "the broker is still opening its data";
      throw new ConchError(ErrorCode.SHUTTING_DOWN, why);
    }
    return broker;
  }

  attach(broker: Broker): void {
    this.#broker = broker;
  }

  /** The broker is going away: admin calls and readiness fail from now on. */
  stopping(): void {
    this.#stopping = true;
  }

  get isStopping(): boolean {
    return this.#stopping;
  }
}

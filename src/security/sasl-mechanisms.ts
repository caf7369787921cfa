/**
 * Which SASL mechanisms a listener offers, and the SaslServer for the one a client picks. PLAIN
 * sends the password itself, so it is offered only on a TLS listener unless the operator says
 * `allowPlainWithoutTls` (a trusted network, a TLS-terminating proxy in front).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { PlainServer } from "./plain-server.js";
import type { CredentialLookup, SaslServer } from "./sasl-server.js";
import { isScramMechanism } from "./scram-credential.js";
import { ScramServer } from "./scram-server.js";

export const SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface SaslPolicy {
  /** The mechanisms the broker offers at all (default: every one). */
  readonly mechanisms?: readonly SaslMechanism[];
  /** Offer PLAIN on listeners without TLS (default false). */
  readonly allowPlainWithoutTls?: boolean;
}

/** The mechanisms offered on a listener, in the order they are listed to clients. */
export function offeredMechanisms(policy: SaslPolicy, tls: boolean): SaslMechanism[] {
  const all = policy.mechanisms ?? SASL_MECHANISMS;
  return all.filter((m) => m !== "PLAIN" || tls || policy.allowPlainWithoutTls === true);
}

/** A server for `mechanism` as a client asked for it, or UNSUPPORTED_SASL_MECHANISM naming those offered. */
export function createSaslServer(
  mechanism: string,
  users: CredentialLookup,
  policy: SaslPolicy,
  tls: boolean,
): SaslServer {
  const offered = offeredMechanisms(policy, tls);
  if (!(offered as string[]).includes(mechanism)) {
    const why = mechanism === "PLAIN" && !tls ? " without TLS" : "";
    throw new ConchError(
      ErrorCode.UNSUPPORTED_SASL_MECHANISM,
      `SASL mechanism ${JSON.stringify(mechanism.slice(0, 64))} is not offered${why}; offered: ${offered.join(", ") || "none"}`,
    );
  }
  return isScramMechanism(mechanism) ? new ScramServer(mechanism, users) : new PlainServer(users);
}

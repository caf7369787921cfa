/**
 * The client's TLS and SASL options (docs/security.md), checked when the client is made.
 *
 *   tls:  { ca?, cert?, key?, servername?, insecureSkipVerify? }   PEM text or bytes, as node:tls takes
 *   sasl: { mechanism: "scram-sha-256" | "scram-sha-512" | "plain", username, password }
 */
import { isIP } from "node:net";
import type { ConnectionOptions as TlsConnectOptions } from "node:tls";
import { ConchError, ErrorCode } from "../format/errors.js";

export interface ClientTlsOptions {
  /** CA certificates (PEM) the broker's certificate must chain to; default: the system's. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** The client's certificate (PEM), for a listener that asks for one (mTLS). */
  cert?: string | Buffer;
  /** The client certificate's private key (PEM). */
  key?: string | Buffer;
  /** The name the broker's certificate must carry; default the broker address's host. */
  servername?: string;
  /**
   * TESTING ONLY: accept any broker certificate, so anyone on the path can read and change the
   * traffic. Never in production.
   */
  insecureSkipVerify?: boolean;
}

export type SaslMechanismOption = "scram-sha-256" | "scram-sha-512" | "plain";

export interface ClientSaslOptions {
  mechanism: SaslMechanismOption;
  username: string;
  password: string;
}

const MECHANISMS: Readonly<Record<SaslMechanismOption, string>> = {
  "scram-sha-256": "SCRAM-SHA-256",
  "scram-sha-512": "SCRAM-SHA-512",
  plain: "PLAIN",
};

/** The SASL options checked, with the mechanism's wire name; INVALID_CONFIG otherwise. */
export function checkSaslOptions(sasl: ClientSaslOptions): ClientSaslOptions & { wireMechanism: string } {
  const wireMechanism = Object.hasOwn(MECHANISMS, sasl.mechanism) ? MECHANISMS[sasl.mechanism] : undefined;
  if (wireMechanism === undefined) {
    throw new ConchError(
      ErrorCode.INVALID_CONFIG,
      `sasl.mechanism must be one of ${Object.keys(MECHANISMS).join(", ")}, not ${JSON.stringify(sasl.mechanism)}`,
    );
  }
  for (const field of ["username", "password"] as const) {
    if (typeof sasl[field] !== "string" || sasl[field] === "") {
      throw new ConchError(ErrorCode.INVALID_CONFIG, `sasl.${field} must be a non-empty string`);
    }
  }
  return { ...sasl, wireMechanism };
}

/** What `tls.connect` takes for these options (TLS 1.2 at least, as the broker). */
export function tlsConnectOptions(tls: ClientTlsOptions, host: string): TlsConnectOptions {
  const options: TlsConnectOptions = { minVersion: "TLSv1.2" };
  // SNI carries names only; an IP address is still checked against the certificate by Node.
  const servername = tls.servername ?? (isIP(host) === 0 ? host : undefined);
  if (servername !== undefined) options.servername = servername;
  if (tls.ca !== undefined) options.ca = tls.ca as string | Buffer | Array<string | Buffer>;
  if (tls.cert !== undefined) options.cert = tls.cert;
  if (tls.key !== undefined) options.key = tls.key;
  if (tls.insecureSkipVerify === true) options.rejectUnauthorized = false;
  return options;
}

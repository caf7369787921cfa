/**
 * What a session (native or Kafka protocol) holds while a connection authenticates: one
 * `SaslServer` per attempt, fed the client's SASL messages one at a time. The session sends each
 * returned challenge back; once `complete` is true, `user` is the authenticated user name and the
 * connection's principal is `User:<user>`. Any thrown ConchError (AUTHENTICATION_FAILED,
 * ILLEGAL_SASL_STATE) ends the attempt; `failure` then says why, for the broker's log only: the
 * client is told no more than "authentication failed", whatever the reason.
 */
import type { ScramCredential, ScramMechanism } from "./scram-credential.js";

export interface SaslServer {
  readonly mechanism: string;
  /** True once the exchange succeeded; the last challenge returned must still be sent. */
  readonly complete: boolean;
  /** The authenticated user name, once complete. */
  readonly user: string | null;
  /** The user name the client claimed, once known: for the failure limiter and the log. */
  readonly claimedUser: string | null;
  /** Why the exchange failed, for the broker's log (never sent to the client). */
  readonly failure: string | null;
  /** Takes the client's next message and resolves with the server's answer (possibly empty). */
  step(message: Buffer): Promise<Buffer>;
}

/** Where SASL servers find users' credentials (the UserStore, or a map in tests). */
export interface CredentialLookup {
  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | undefined;
}

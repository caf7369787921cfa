/**
 * One connection's authentication, for any protocol's session (the native one now, the Kafka one
 * later): who the connection is (its principal), whether it may do more than log in, and the SASL
 * exchange in between, with the failure limiter's delays applied. Pure of sockets: the session
 * hands in what TLS established and the client's SASL messages, and sends back what this returns.
 *
 *   start:        principal User:ANONYMOUS, or the verified client certificate's principal
 *   handshake(m): a SaslServer for mechanism m (once; again only after a failed attempt closes)
 *   step(bytes):  the server's answer; when the exchange completes, principal User:<name>
 *
 * A failed step waits the limiter's delay, then throws AUTHENTICATION_FAILED (the client learns
 * no more than that); the session answers it and closes the connection.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { AuthFailureLimiter } from "./auth-failure-limiter.js";
import {
  createSaslServer,
  offeredMechanisms,
  type SaslMechanism,
  type SaslPolicy,
} from "./sasl-mechanisms.js";
import type { CredentialLookup, SaslServer } from "./sasl-server.js";
import { ANONYMOUS } from "./user-name.js";

/** What a broker's listeners share to authenticate connections. */
export interface AuthSettings {
  readonly users: CredentialLookup;
  readonly policy: SaslPolicy;
  readonly limiter: AuthFailureLimiter;
  /** Nothing but logging in is allowed before a login (or a verified client certificate). */
  readonly required: boolean;
}

/** What the transport established about a connection. */
export interface ConnectionIdentity {
  readonly tls: boolean;
  /** The client's address, for the failure limiter. */
  readonly address: string;
  /** `User:<subject>` of a client certificate the CA verified (certificatePrincipal), else null. */
  readonly certificatePrincipal: string | null;
}

export const ANONYMOUS_PRINCIPAL = `User:${ANONYMOUS}`;

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class ConnectionAuth {
  readonly #settings: AuthSettings;
  readonly #identity: ConnectionIdentity;
  #principal: string;
  #loggedIn = false;
  #server: SaslServer | null = null;
  #busy = false;

  constructor(settings: AuthSettings, identity: ConnectionIdentity) {
    this.#settings = settings;
    this.#identity = identity;
    this.#principal = identity.certificatePrincipal ?? ANONYMOUS_PRINCIPAL;
  }

  /** `User:<name>`: the SASL login, else the client certificate, else User:ANONYMOUS. */
  get principal(): string {
    return this.#principal;
  }

  /** Whether requests other than logging in are allowed. */
  get authenticated(): boolean {
    return !this.#settings.required || this.#loggedIn || this.#identity.certificatePrincipal !== null;
  }

  /** The SASL user name once logged in, else null. */
  get user(): string | null {
    return this.#loggedIn ? (this.#server?.user ?? null) : null;
  }

  /** The mechanisms this connection's listener offers. */
  mechanisms(): SaslMechanism[] {
    return offeredMechanisms(this.#settings.policy, this.#identity.tls);
  }

  /** Starts an exchange with `mechanism`; ILLEGAL_SASL_STATE once logged in or mid-exchange. */
  handshake(mechanism: string): void {
    if (this.#loggedIn || this.#server !== null) {
      throw new ConchError(ErrorCode.ILLEGAL_SASL_STATE, "SaslHandshake after a login has started");
    }
    this.#server = createSaslServer(
      mechanism,
      this.#settings.users,
      this.#settings.policy,
      this.#identity.tls,
    );
  }

  /**
   * Takes the client's next SASL message; resolves with the answer. Throws ILLEGAL_SASL_STATE out
   * of turn, AUTHENTICATION_FAILED (after the limiter's delay) when the login fails. On failure
   * `failure` says why, for the broker's log.
   */
  async step(message: Buffer): Promise<Buffer> {
    const server = this.#server;
    if (server === null || this.#loggedIn || this.#busy) {
      throw new ConchError(
        ErrorCode.ILLEGAL_SASL_STATE,
        "SaslAuthenticate without a SaslHandshake before it",
      );
    }
    const { limiter } = this.#settings;
    const address = this.#identity.address;
    this.#busy = true;
    try {
      // Evaluated after the limiter's spacing, so parallel guesses queue rather than race.
      const admit = limiter.admit(address, server.claimedUser);
      if (admit > 0) await wait(admit);
      const answer = await server.step(message);
      if (server.complete) {
        const user = server.user ?? "";
        limiter.success(address, user);
        this.#loggedIn = true;
        this.#principal = `User:${user}`;
      }
      return answer;
    } catch (err) {
      const delay = limiter.failure(address, server.claimedUser);
      if (delay > 0) await wait(delay);
      throw err;
    } finally {
      this.#busy = false;
    }
  }

  /** Why the last attempt failed, for the log (never sent to the client). */
  get failure(): string | null {
    return this.#server?.failure ?? null;
  }

  /** The user name the client claimed, for the log. */
  get claimedUser(): string | null {
    return this.#server?.claimedUser ?? null;
  }
}

/**
 * The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as a state machine:
 *
 *   start --client-first--> server-first sent --client-final--> complete (server-final sent)
 *     any error ------------------------------------------------> failed
 *
 * The broker needs only StoredKey and ServerKey: it recovers ClientKey from the proof
 * (ClientProof XOR HMAC(StoredKey, AuthMessage)) and checks that H(ClientKey) is StoredKey, in
 * constant time. An unknown user is answered like a known one, with a salt derived from a
 * per-process secret and the name, so the server-first message does not tell who exists; the
 * exchange then fails at the proof, like a wrong password.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { CredentialLookup, SaslServer } from "./sasl-server.js";
import {
  DEFAULT_SCRAM_ITERATIONS,
  digest,
  digestBytes,
  hmac,
  SALT_BYTES,
  type ScramCredential,
  type ScramMechanism,
} from "./scram-credential.js";
import { type ClientFirst, formatServerFirst, parseClientFinal, parseClientFirst } from "./scram-messages.js";

/** Makes unknown users' salts stable within a process and unguessable from outside it. */
const decoySecret = randomBytes(32);

export interface ScramServerOptions {
  /** The server's part of the nonce; 24 random bytes in base64 unless a test fixes it. */
  serverNonce?: () => string;
}

type State = "start" | "first-sent" | "complete" | "failed";

export class ScramServer implements SaslServer {
  readonly mechanism: ScramMechanism;
  #users: CredentialLookup;
  #serverNonce: () => string;
  #state: State = "start";
  #first: ClientFirst | null = null;
  #serverFirst = "";
  #combinedNonce = "";
  /** The user's credential, or a decoy one for a user that does not exist. */
  #credential: ScramCredential | null = null;
  #known = false;
  #failure: string | null = null;

  constructor(mechanism: ScramMechanism, users: CredentialLookup, options: ScramServerOptions = {}) {
    this.mechanism = mechanism;
    this.#users = users;
    this.#serverNonce = options.serverNonce ?? (() => randomBytes(24).toString("base64"));
  }

  get complete(): boolean {
    return this.#state === "complete";
  }

  get user(): string | null {
    return this.#state === "complete" ? (this.#first?.user ?? null) : null;
  }

  get claimedUser(): string | null {
    return this.#first?.user ?? null;
  }

  get failure(): string | null {
    return this.#failure;
  }

  async step(message: Buffer): Promise<Buffer> {
    try {
      if (this.#state === "start") return Buffer.from(this.#onClientFirst(message));
      if (this.#state === "first-sent") return Buffer.from(this.#onClientFinal(message));
    } catch (err) {
      this.#fail(err instanceof ConchError ? err.message : String(err));
      throw err;
    }
    throw new ConchError(ErrorCode.ILLEGAL_SASL_STATE, `SCRAM exchange already ${this.#state}`);
  }

  #onClientFirst(message: Buffer): string {
    const first = parseClientFirst(message);
    this.#first = first;
    const credential = this.#users.scramCredential(first.user, this.mechanism);
    this.#known = credential !== undefined;
    this.#credential = credential ?? decoyCredential(this.mechanism, first.user);
    this.#combinedNonce = first.clientNonce + this.#serverNonce();
    this.#serverFirst = formatServerFirst(
      this.#combinedNonce,
      this.#credential.salt,
      this.#credential.iterations,
    );
    this.#state = "first-sent";
    return this.#serverFirst;
  }

  #onClientFinal(message: Buffer): string {
    const credential = this.#credential;
    const first = this.#first;
    if (credential === null || first === null) throw new ConchError(ErrorCode.INTERNAL, "SCRAM state lost");
    const n = digestBytes(this.mechanism);
    const final = parseClientFinal(message, this.#combinedNonce, n, first.clientNonce);
    const authMessage = `${first.bare},${this.#serverFirst},${final.withoutProof}`;
    const clientSignature = hmac(this.mechanism, credential.storedKey, authMessage);
    const clientKey = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) clientKey[i] = (final.proof[i] ?? 0) ^ (clientSignature[i] ?? 0);
    const proofOk = timingSafeEqual(digest(this.mechanism, clientKey), credential.storedKey);
    if (!proofOk || !this.#known) {
      throw new ConchError(
        ErrorCode.AUTHENTICATION_FAILED,
        "Authentication failed: bad user name or password",
      );
    }
    this.#state = "complete";
    return `v=${hmac(this.mechanism, credential.serverKey, authMessage).toString("base64")}`;
  }

  #fail(reason: string): void {
    this.#state = "failed";
    this.#credential = null;
    const who = this.#first === null ? "" : ` for user ${JSON.stringify(this.#first.user)}`;
    this.#failure = this.#known || this.#first === null ? `${reason}${who}` : `unknown user${who}`;
  }
}

/** A credential no password matches, with a salt that is the same each time the name is tried. */
function decoyCredential(mechanism: ScramMechanism, user: string): ScramCredential {
  const salt = createHmac("sha256", decoySecret)
    .update(`${mechanism}\0${user}`)
    .digest()
    .subarray(0, SALT_BYTES);
  const n = digestBytes(mechanism);
  return {
    mechanism,
    salt,
    iterations: DEFAULT_SCRAM_ITERATIONS,
    storedKey: randomBytes(n),
    serverKey: randomBytes(n),
  };
}

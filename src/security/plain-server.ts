/**
 * SASL PLAIN (RFC 4616): one message, `[authzid] NUL authcid NUL passwd`, checked against the
 * user's SCRAM credential (the broker keeps no password to compare with: it salts the one sent
 * and compares StoredKeys, in constant time). The password crosses the wire as it is, so the
 * mechanism is offered on TLS listeners only unless the operator allows it (sasl-mechanisms.ts).
 *
 * Parsing is strict: at most 767 bytes (RFC 4616's three 255-byte fields and two NULs), UTF-8,
 * exactly two NULs, a non-empty user name and password, and an authorization identity that is
 * empty or the user's own name (acting as another user is not supported).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { CredentialLookup, SaslServer } from "./sasl-server.js";
import { deriveScramCredential, passwordMatches, type ScramCredential } from "./scram-credential.js";

export const MAX_PLAIN_FIELD_BYTES = 255;
export const MAX_PLAIN_MESSAGE_BYTES = 3 * MAX_PLAIN_FIELD_BYTES + 2;

export interface PlainMessage {
  readonly user: string;
  readonly password: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function malformed(what: string): ConchError {
  return new ConchError(ErrorCode.AUTHENTICATION_FAILED, `Malformed PLAIN message: ${what}`);
}

export function parsePlain(message: Buffer): PlainMessage {
  if (message.length > MAX_PLAIN_MESSAGE_BYTES) {
    throw malformed(`${message.length} bytes; the limit is ${MAX_PLAIN_MESSAGE_BYTES}`);
  }
  const first = message.indexOf(0);
  const second = first < 0 ? -1 : message.indexOf(0, first + 1);
  if (second < 0 || message.indexOf(0, second + 1) >= 0)
    throw malformed("must hold exactly two NUL separators");
  const fields = [
    message.subarray(0, first),
    message.subarray(first + 1, second),
    message.subarray(second + 1),
  ];
  const [authzid, user, password] = fields.map((field) => {
    if (field.length > MAX_PLAIN_FIELD_BYTES)
      throw malformed(`a field is over ${MAX_PLAIN_FIELD_BYTES} bytes`);
    try {
      return utf8.decode(field);
    } catch {
      throw malformed("not UTF-8");
    }
  }) as [string, string, string];
  if (user.length === 0) throw malformed("empty user name");
  if (password.length === 0) throw malformed("empty password");
  if (authzid !== "" && authzid !== user)
    throw malformed("authorization identity differs from the user name");
  return { user, password };
}

/** Made once: an unknown user costs the same PBKDF2 as a known one, so timing does not tell. */
let decoy: Promise<ScramCredential> | null = null;

export class PlainServer implements SaslServer {
  readonly mechanism = "PLAIN";
  #users: CredentialLookup;
  #done = false;
  #user: string | null = null;
  #claimed: string | null = null;
  #failure: string | null = null;

  constructor(users: CredentialLookup) {
    this.#users = users;
  }

  get complete(): boolean {
    return this.#user !== null;
  }

  get user(): string | null {
    return this.#user;
  }

  get claimedUser(): string | null {
    return this.#claimed;
  }

  get failure(): string | null {
    return this.#failure;
  }

  async step(message: Buffer): Promise<Buffer> {
    if (this.#done) throw new ConchError(ErrorCode.ILLEGAL_SASL_STATE, "PLAIN takes a single message");
    this.#done = true;
    let parsed: PlainMessage;
    try {
      parsed = parsePlain(message);
    } catch (err) {
      this.#failure = (err as ConchError).message;
      throw err;
    }
    this.#claimed = parsed.user;
    const credential =
      this.#users.scramCredential(parsed.user, "SCRAM-SHA-256") ??
      this.#users.scramCredential(parsed.user, "SCRAM-SHA-512");
    decoy ??= deriveScramCredential("SCRAM-SHA-256", "\0never a password\0");
    const ok = await passwordMatches(credential ?? (await decoy), parsed.password);
    if (!ok || credential === undefined) {
      this.#failure = `${credential === undefined ? "unknown user" : "wrong password"} ${JSON.stringify(parsed.user)}`;
      throw new ConchError(
        ErrorCode.AUTHENTICATION_FAILED,
        "Authentication failed: bad user name or password",
      );
    }
    this.#user = parsed.user;
    return Buffer.alloc(0);
  }
}

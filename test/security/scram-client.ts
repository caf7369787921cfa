/**
 * A SCRAM client written for the tests from RFC 5802 (not from the server's code): it makes the
 * messages a well-behaved client sends, and checks the server's signature.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import type { CredentialLookup } from "../../src/security/sasl-server.js";
import type { ScramCredential, ScramMechanism } from "../../src/security/scram-credential.js";

const hashOf = (m: ScramMechanism) => (m === "SCRAM-SHA-256" ? "sha256" : "sha512");

export class TestScramClient {
  readonly mechanism: ScramMechanism;
  readonly user: string;
  readonly password: string;
  readonly nonce: string;
  #bare = "";
  #serverSignature = "";

  constructor(
    mechanism: ScramMechanism,
    user: string,
    password: string,
    nonce = randomBytes(18).toString("base64"),
  ) {
    this.mechanism = mechanism;
    this.user = user;
    this.password = password;
    this.nonce = nonce;
  }

  first(): Buffer {
    this.#bare = `n=${this.user.replace(/=/g, "=3D").replace(/,/g, "=2C")},r=${this.nonce}`;
    return Buffer.from(`n,,${this.#bare}`);
  }

  /** `prefix` goes before the combined nonce (librdkafka repeats its own nonce there). */
  final(serverFirst: Buffer, prefix = ""): Buffer {
    const text = serverFirst.toString();
    const attrs = new Map(text.split(",").map((p) => [p[0], p.slice(2)] as const));
    const r = attrs.get("r") ?? "";
    if (!r.startsWith(this.nonce)) throw new Error("server nonce does not extend ours");
    const hash = hashOf(this.mechanism);
    const salted = pbkdf2Sync(
      this.password,
      Buffer.from(attrs.get("s") ?? "", "base64"),
      Number(attrs.get("i")),
      hash === "sha256" ? 32 : 64,
      hash,
    );
    const clientKey = createHmac(hash, salted).update("Client Key").digest();
    const storedKey = createHash(hash).update(clientKey).digest();
    const withoutProof = `c=biws,r=${prefix}${r}`;
    const authMessage = `${this.#bare},${text},${withoutProof}`;
    const signature = createHmac(hash, storedKey).update(authMessage).digest();
    const proof = Buffer.from(clientKey.map((b, i) => b ^ (signature[i] ?? 0)));
    const serverKey = createHmac(hash, salted).update("Server Key").digest();
    this.#serverSignature = createHmac(hash, serverKey).update(authMessage).digest("base64");
    return Buffer.from(`${withoutProof},p=${proof.toString("base64")}`);
  }

  /** Whether the server-final message proves the server holds the user's ServerKey. */
  verifies(serverFinal: Buffer): boolean {
    return serverFinal.toString() === `v=${this.#serverSignature}`;
  }
}

/** A CredentialLookup over a map `user -> credentials`. */
export function lookupOf(users: Record<string, ScramCredential[]>): CredentialLookup {
  return {
    scramCredential: (user, mechanism) =>
      Object.hasOwn(users, user) ? users[user]?.find((c) => c.mechanism === mechanism) : undefined,
  };
}

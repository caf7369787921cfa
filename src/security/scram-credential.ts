/**
 * SCRAM salted credentials (RFC 5802 section 3, RFC 7677): what the broker keeps for a user instead
 * of the password. From the password, a random salt and an iteration count:
 *
 *   SaltedPassword = Hi(password, salt, i)          (PBKDF2 with HMAC-H)
 *   StoredKey      = H(HMAC(SaltedPassword, "Client Key"))
 *   ServerKey      = HMAC(SaltedPassword, "Server Key")
 *
 * StoredKey lets the broker check a client's proof without being able to make one; ServerKey lets
 * it prove to the client that it holds the credential. Neither gives back the password short of a
 * dictionary attack slowed by the iteration count.
 *
 * Passwords are taken as their UTF-8 bytes without SASLprep, as Kafka and kafkajs do, so that the
 * same password works with their clients.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from "node:crypto";
import { ConchError, ErrorCode } from "../format/errors.js";

export const SCRAM_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

/** RFC 7677 asks for at least 4096; more only slows each PLAIN check and each client's login. */
export const MIN_SCRAM_ITERATIONS = 4096;
/** A stored count above this is refused: it would let a crafted store make every login cost seconds. */
export const MAX_SCRAM_ITERATIONS = 1_000_000;
export const DEFAULT_SCRAM_ITERATIONS = 8192;
export const SALT_BYTES = 32;
const MIN_SALT_BYTES = 16;
const MAX_SALT_BYTES = 128;

interface Digest {
  /** node:crypto's name of the hash. */
  readonly hash: "sha256" | "sha512";
  /** Bytes of its output: the length of StoredKey, ServerKey and a proof. */
  readonly bytes: number;
}

const digests: Record<ScramMechanism, Digest> = {
  "SCRAM-SHA-256": { hash: "sha256", bytes: 32 },
  "SCRAM-SHA-512": { hash: "sha512", bytes: 64 },
};

export function isScramMechanism(name: string): name is ScramMechanism {
  return name === "SCRAM-SHA-256" || name === "SCRAM-SHA-512";
}

/** Output length of the mechanism's hash in bytes. */
export function digestBytes(mechanism: ScramMechanism): number {
  return digests[mechanism].bytes;
}

export interface ScramCredential {
  readonly mechanism: ScramMechanism;
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

/** Why `credential` could not have come from `deriveScramCredential`, or null when it could. */
export function scramCredentialProblem(credential: ScramCredential): string | null {
  const { mechanism, salt, iterations, storedKey, serverKey } = credential;
  if (!isScramMechanism(mechanism)) return `unknown mechanism ${JSON.stringify(mechanism)}`;
  if (
    !Number.isSafeInteger(iterations) ||
    iterations < MIN_SCRAM_ITERATIONS ||
    iterations > MAX_SCRAM_ITERATIONS
  ) {
    return `iterations must be an integer from ${MIN_SCRAM_ITERATIONS} to ${MAX_SCRAM_ITERATIONS}`;
  }
  if (salt.length < MIN_SALT_BYTES || salt.length > MAX_SALT_BYTES) {
    return `salt must be ${MIN_SALT_BYTES} to ${MAX_SALT_BYTES} bytes`;
  }
  const n = digestBytes(mechanism);
  if (storedKey.length !== n || serverKey.length !== n) return `${mechanism} keys must be ${n} bytes`;
  return null;
}

/** Hi() of RFC 5802: PBKDF2 with the mechanism's HMAC, on the thread pool (it takes milliseconds). */
export function saltPassword(
  mechanism: ScramMechanism,
  password: string,
  salt: Buffer,
  iterations: number,
): Promise<Buffer> {
  const { hash, bytes } = digests[mechanism];
  return new Promise((resolve, reject) => {
    pbkdf2(Buffer.from(password, "utf8"), salt, iterations, bytes, hash, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export function hmac(mechanism: ScramMechanism, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(digests[mechanism].hash, key).update(data).digest();
}

export function digest(mechanism: ScramMechanism, data: Buffer): Buffer {
  return createHash(digests[mechanism].hash).update(data).digest();
}

/** The credential of `password` with a fresh random salt (or the given one, for test vectors). */
export async function deriveScramCredential(
  mechanism: ScramMechanism,
  password: string,
  options: { iterations?: number; salt?: Buffer } = {},
): Promise<ScramCredential> {
  const iterations = options.iterations ?? DEFAULT_SCRAM_ITERATIONS;
  const salt = options.salt ?? randomBytes(SALT_BYTES);
  const salted = await saltPassword(mechanism, password, salt, iterations);
  const credential: ScramCredential = {
    mechanism,
    salt,
    iterations,
    storedKey: digest(mechanism, hmac(mechanism, salted, "Client Key")),
    serverKey: hmac(mechanism, salted, "Server Key"),
  };
  const problem = scramCredentialProblem(credential);
  if (problem !== null) throw new ConchError(ErrorCode.INVALID_REQUEST, `Bad SCRAM parameters: ${problem}`);
  return credential;
}

/**
 * Whether `password` is the one `credential` was made from (for SASL PLAIN, which sends the
 * password itself). The comparison takes the same time wherever the keys differ.
 */
export async function passwordMatches(credential: ScramCredential, password: string): Promise<boolean> {
  const { mechanism } = credential;
  const salted = await saltPassword(mechanism, password, credential.salt, credential.iterations);
  const storedKey = digest(mechanism, hmac(mechanism, salted, "Client Key"));
  return timingSafeEqual(storedKey, credential.storedKey);
}

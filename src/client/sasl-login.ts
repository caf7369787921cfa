/**
 * The client's side of a SASL login (docs/security.md), after the handshake: SaslHandshake with
 * the mechanism, then PLAIN's one message or SCRAM's two (RFC 5802 / 7677, no channel binding).
 * A SCRAM login checks the broker's final signature: a broker that does not hold the user's keys
 * cannot pass for one that does.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { ConchError, ErrorCode } from "../format/errors.js";
import {
  decodeSaslAuthenticateResponse,
  encodeSaslAuthenticateRequest,
} from "../protocol/sasl-authenticate.js";
import { decodeSaslHandshakeResponse, encodeSaslHandshakeRequest } from "../protocol/sasl-handshake.js";
import type { RequestOptions } from "./connection.js";

const pbkdf2Async = promisify(pbkdf2);

/** The most PBKDF2 rounds a broker may ask for: more would let it stall the client. */
const MAX_ITERATIONS = 1_000_000;
const MIN_ITERATIONS = 4096;

/** The request call of a Connection (a seam, so this file needs no socket). */
export type SaslRequest = <A, T>(
  encode: (correlationId: number, arg: A) => Buffer,
  arg: A,
  decode: (frame: Buffer) => T,
  options: RequestOptions,
) => Promise<T>;

export interface SaslLogin {
  /** The wire name: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. */
  wireMechanism: string;
  username: string;
  password: string;
}

export async function saslLogin(
  request: SaslRequest,
  login: SaslLogin,
  options: RequestOptions,
): Promise<void> {
  await request(
    encodeSaslHandshakeRequest,
    { mechanism: login.wireMechanism },
    decodeSaslHandshakeResponse,
    options,
  );
  const send = (bytes: Buffer): Promise<Buffer> =>
    request(encodeSaslAuthenticateRequest, bytes, decodeSaslAuthenticateResponse, options);
  if (login.wireMechanism === "PLAIN") {
    await send(Buffer.from(`\0${login.username}\0${login.password}`, "utf8"));
    return;
  }
  const hash = login.wireMechanism === "SCRAM-SHA-512" ? "sha512" : "sha256";
  const nonce = randomBytes(24).toString("base64");
  const bare = `n=${login.username.replace(/=/g, "=3D").replace(/,/g, "=2C")},r=${nonce}`;
  const serverFirst = (await send(Buffer.from(`n,,${bare}`, "utf8"))).toString("utf8");
  const fields = scramFields(serverFirst);
  const serverNonce = fields.get("r") ?? "";
  const salt = Buffer.from(fields.get("s") ?? "", "base64");
  const iterations = Number(fields.get("i"));
  if (!serverNonce.startsWith(nonce) || serverNonce.length === nonce.length || salt.length === 0) {
    throw failed("the broker's SCRAM challenge is malformed");
  }
  if (!Number.isInteger(iterations) || iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS) {
    throw failed(
      `the broker asked for ${fields.get("i")} SCRAM iterations (${MIN_ITERATIONS} to ${MAX_ITERATIONS})`,
    );
  }
  const length = hash === "sha512" ? 64 : 32;
  const salted = await pbkdf2Async(Buffer.from(login.password, "utf8"), salt, iterations, length, hash);
  const clientKey = createHmac(hash, salted).update("Client Key").digest();
  const storedKey = createHash(hash).update(clientKey).digest();
  const withoutProof = `c=biws,r=${serverNonce}`;
  const authMessage = `${bare},${serverFirst},${withoutProof}`;
  const clientSignature = createHmac(hash, storedKey).update(authMessage).digest();
  for (let i = 0; i < length; i++) clientKey[i] = (clientKey[i] ?? 0) ^ (clientSignature[i] ?? 0);
  const serverFinal = await send(Buffer.from(`${withoutProof},p=${clientKey.toString("base64")}`, "utf8"));
  const serverKey = createHmac(hash, salted).update("Server Key").digest();
  const expected = Buffer.from(`v=${createHmac(hash, serverKey).update(authMessage).digest("base64")}`);
  if (serverFinal.length !== expected.length || !timingSafeEqual(serverFinal, expected)) {
    throw failed("the broker did not prove it holds the user's SCRAM keys");
  }
}

function scramFields(message: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of message.split(",")) if (part[1] === "=") fields.set(part[0] ?? "", part.slice(2));
  return fields;
}

function failed(why: string): ConchError {
  return new ConchError(ErrorCode.AUTHENTICATION_FAILED, `SASL login failed: ${why}`);
}

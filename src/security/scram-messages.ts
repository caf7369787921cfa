/**
 * The SCRAM messages a broker reads and writes (RFC 5802 section 7), parsed strictly: the size is
 * checked before a byte is decoded, every attribute is in its place, and anything the broker does
 * not support (channel binding, an authorization identity, mandatory extensions) is refused by
 * name rather than ignored.
 *
 *   client-first  = "n,," "n=" saslname "," "r=" c-nonce *("," ext)
 *   server-first  = "r=" c-nonce s-nonce "," "s=" base64(salt) "," "i=" iterations
 *   client-final  = "c=biws" "," "r=" c-nonce s-nonce *("," ext) "," "p=" base64(proof)
 *   server-final  = "v=" base64(ServerSignature)
 *
 * "biws" is base64("n,,"): the client says it neither uses nor was offered channel binding.
 * Optional extensions (Kafka's "tokenauth=true") are read and ignored, as the RFC asks.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

/** Larger than any message of a 255-character user and a 256-character nonce, escaped. */
export const MAX_SCRAM_MESSAGE_BYTES = 2048;
export const MAX_NONCE_LENGTH = 256;
export const MAX_SCRAM_USER_LENGTH = 255;
/** base64("n,,"): the only channel-binding attribute a client-final may carry. */
export const NO_CHANNEL_BINDING = "biws";

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** printable = %x21-2B / %x2D-7E: what a nonce is made of (no comma). */
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;
/** An optional extension: a name of letters, then a value without NUL or comma. */
const EXTENSION = /^[A-Za-z]+=[^\0,]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Whether `text` is canonical padded base64 (what Buffer's encoder writes), nothing else. */
export function isBase64(text: string): boolean {
  return BASE64.test(text);
}

export interface ClientFirst {
  /** client-first-message-bare: the part that enters the AuthMessage. */
  readonly bare: string;
  readonly user: string;
  readonly clientNonce: string;
}

export interface ClientFinal {
  /** client-final-message-without-proof: the part that enters the AuthMessage. */
  readonly withoutProof: string;
  readonly proof: Buffer;
}

function malformed(what: string): ConchError {
  return new ConchError(ErrorCode.AUTHENTICATION_FAILED, `Malformed SCRAM message: ${what}`);
}

/** The message as text: bounded first, then decoded as strict UTF-8 with no NUL. */
function text(message: Buffer, name: string): string {
  if (message.length === 0) throw malformed(`empty ${name}`);
  if (message.length > MAX_SCRAM_MESSAGE_BYTES) {
    throw malformed(`${name} is ${message.length} bytes; the limit is ${MAX_SCRAM_MESSAGE_BYTES}`);
  }
  let s: string;
  try {
    s = utf8.decode(message);
  } catch {
    throw malformed(`${name} is not UTF-8`);
  }
  if (s.includes("\0")) throw malformed(`${name} contains a NUL`);
  return s;
}

/** The value of attribute `name` in `part` (`n=...`), or an error naming what was expected. */
function attribute(part: string | undefined, name: string, message: string): string {
  if (part === undefined || !part.startsWith(`${name}=`))
    throw malformed(`${message} lacks its ${name}= attribute`);
  return part.slice(name.length + 1);
}

function nonce(value: string, message: string): string {
  if (value.length === 0 || value.length > MAX_NONCE_LENGTH || !NONCE.test(value)) {
    throw malformed(`${message} has a bad nonce (1 to ${MAX_NONCE_LENGTH} printable characters, no comma)`);
  }
  return value;
}

function checkExtensions(parts: string[], message: string): void {
  for (const part of parts) {
    if (!EXTENSION.test(part))
      throw malformed(`${message} has a bad attribute ${JSON.stringify(part.slice(0, 32))}`);
  }
}

/** saslname: "," and "=" travel as "=2C" and "=3D"; any other "=" is an error (RFC 5802 5.1). */
function unescapeSaslName(value: string): string {
  if (value.length === 0) throw malformed("empty user name");
  const user = value.replace(/=(2C|3D|.{0,2})/g, (_, code: string) => {
    if (code === "2C") return ",";
    if (code === "3D") return "=";
    throw malformed("user name has an '=' that is not =2C or =3D");
  });
  if (user.length > MAX_SCRAM_USER_LENGTH) throw malformed(`user name longer than ${MAX_SCRAM_USER_LENGTH}`);
  return user;
}

/** The inverse of unescapeSaslName, for clients (and tests). */
export function escapeSaslName(user: string): string {
  return user.replace(/=/g, "=3D").replace(/,/g, "=2C");
}

export function parseClientFirst(message: Buffer): ClientFirst {
  const s = text(message, "client-first message");
  if (s.startsWith("y,") || s.startsWith("p="))
    throw malformed("channel binding is not supported (gs2 header must be n,,)");
  if (s.startsWith("n,") && !s.startsWith("n,,"))
    throw malformed("an authorization identity is not supported");
  if (!s.startsWith("n,,")) throw malformed("client-first message must start with n,,");
  const bare = s.slice(3);
  const parts = bare.split(",");
  if (parts[0]?.startsWith("m=")) throw malformed("mandatory extensions are not supported");
  const user = unescapeSaslName(attribute(parts[0], "n", "client-first message"));
  const clientNonce = nonce(attribute(parts[1], "r", "client-first message"), "client-first message");
  checkExtensions(parts.slice(2), "client-first message");
  return { bare, user, clientNonce };
}

export function formatServerFirst(combinedNonce: string, salt: Buffer, iterations: number): string {
  return `r=${combinedNonce},s=${salt.toString("base64")},i=${iterations}`;
}

/**
 * Parses a client-final message whose nonce must be `combinedNonce` and proof `proofBytes` long.
 * librdkafka (2.0.2 at least) sends its own nonce again before the combined one; Kafka accepts that
 * (it checks only that the nonce ends with the combined one), so this accepts exactly that form too.
 * The proof covers the message as sent, so the extra prefix gains a client nothing.
 */
export function parseClientFinal(
  message: Buffer,
  combinedNonce: string,
  proofBytes: number,
  clientNonce: string,
): ClientFinal {
  const s = text(message, "client-final message");
  const parts = s.split(",");
  const binding = attribute(parts[0], "c", "client-final message");
  if (binding !== NO_CHANNEL_BINDING) throw malformed("channel binding must be biws (n,,)");
  const r = attribute(parts[1], "r", "client-final message");
  if (r !== combinedNonce && r !== clientNonce + combinedNonce) {
    throw malformed("client-final nonce is not the one the server sent");
  }
  const last = parts.length - 1;
  if (last < 2) throw malformed("client-final message lacks its p= attribute");
  const proofText = attribute(parts[last], "p", "client-final message");
  checkExtensions(parts.slice(2, last), "client-final message");
  if (!isBase64(proofText)) throw malformed("proof is not base64");
  const proof = Buffer.from(proofText, "base64");
  if (proof.length !== proofBytes) throw malformed(`proof is ${proof.length} bytes; expected ${proofBytes}`);
  return { withoutProof: s.slice(0, s.length - proofText.length - 3), proof };
}

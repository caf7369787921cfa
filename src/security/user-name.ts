/**
 * The rules for user names and passwords, checked when a user is added (and when the user file is
 * read). Names are ASCII letters, digits and `._@-`: nothing a SCRAM client must escape, nothing
 * that could be read as part of an ACL principal (`User:*`, a comma, a colon), and nothing that
 * looks like the principal of an unauthenticated connection.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { MAX_PLAIN_FIELD_BYTES } from "./plain-server.js";

export const MAX_USER_NAME_LENGTH = 255;
/** Short passwords fall to the dictionary attack that a stolen user file allows; 8 is the floor. */
export const MIN_PASSWORD_BYTES = 8;
/** PLAIN carries at most 255 bytes of password, and a user should be able to use either mechanism. */
export const MAX_PASSWORD_BYTES = MAX_PLAIN_FIELD_BYTES;
/** The principal name of a connection that did not authenticate; no user may take it. */
export const ANONYMOUS = "ANONYMOUS";

const LEGAL = /^[A-Za-z0-9._@-]+$/;

export function userNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return "user name must be a string";
  if (name.length === 0) return "user name must not be empty";
  if (name.length > MAX_USER_NAME_LENGTH)
    return `user name is longer than ${MAX_USER_NAME_LENGTH} characters`;
  if (!LEGAL.test(name)) {
    return `user name ${JSON.stringify(name.slice(0, 64))} may contain only ASCII letters, digits, '.', '_', '@' and '-'`;
  }
  if (name === ANONYMOUS) return `user name ${ANONYMOUS} is reserved`;
  return null;
}

export function passwordProblem(password: unknown): string | null {
  if (typeof password !== "string") return "password must be a string";
  const bytes = Buffer.from(password, "utf8");
  if (bytes.toString("utf8") !== password) return "password is not valid Unicode text";
  if (bytes.length < MIN_PASSWORD_BYTES) return `password must be at least ${MIN_PASSWORD_BYTES} bytes`;
  if (bytes.length > MAX_PASSWORD_BYTES) return `password must be at most ${MAX_PASSWORD_BYTES} bytes`;
  if (password.includes("\0")) return "password must not contain a NUL character";
  return null;
}

export function checkUserName(name: unknown): asserts name is string {
  const problem = userNameProblem(name);
  if (problem !== null) throw new ConchError(ErrorCode.INVALID_REQUEST, `Invalid user name: ${problem}`);
}

export function checkPassword(password: unknown): asserts password is string {
  const problem = passwordProblem(password);
  if (problem !== null) throw new ConchError(ErrorCode.INVALID_REQUEST, `Invalid password: ${problem}`);
}

/**
 * A password for a command, never from a flag value (it would show in `ps`): the first line of a
 * file (`--password-file`, `--sasl-password-file`), else an environment variable.
 */
import { readFileSync } from "node:fs";
import { ConchError, ErrorCode } from "../format/errors.js";

/** A password file is a line of text: anything larger is not one. */
const MAX_PASSWORD_FILE_BYTES = 4096;

export function passwordInput(
  file: string | undefined,
  fileFlag: string,
  envName: string,
  env: Record<string, string | undefined> = process.env,
): string {
  if (file !== undefined) {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_PASSWORD_FILE_BYTES) {
      throw new ConchError(ErrorCode.INVALID_CONFIG, `${fileFlag} ${file} is not a password file`);
    }
    return (bytes.toString("utf8").split(/\r?\n/)[0] ?? "").trimEnd();
  }
  const fromEnv = env[envName];
  if (fromEnv === undefined || fromEnv === "") {
    throw new ConchError(ErrorCode.INVALID_CONFIG, `no password: set ${envName} or give ${fileFlag}`);
  }
  return fromEnv;
}

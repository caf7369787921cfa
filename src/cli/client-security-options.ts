/**
 * The TLS and SASL options every client command shares (docs/security.md), and the SDK options
 * they make. The SASL password never appears as a flag value (it would show in `ps`): it comes
 * from CONCH_SASL_PASSWORD or from the file --sasl-password-file names.
 */
import { readFileSync } from "node:fs";
import { type Command, Option } from "commander";
import type { ClientSaslOptions, ClientTlsOptions, SaslMechanismOption } from "../client/security-options.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { passwordInput } from "./password-input.js";

export const SASL_MECHANISM_CHOICES: readonly SaslMechanismOption[] = [
  "scram-sha-256",
  "scram-sha-512",
  "plain",
];

/** What commander parses from these options. */
export interface ClientSecurityFlags {
  tls?: boolean;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsInsecure?: boolean;
  saslMechanism?: SaslMechanismOption;
  saslUsername?: string;
  saslPasswordFile?: string;
}

export function withClientSecurity(command: Command): Command {
  return command
    .addOption(new Option("--tls", "connect with TLS (implied by the other --tls options)").env("CONCH_TLS"))
    .addOption(
      new Option("--tls-ca <file>", "PEM CA certificates to trust for the broker's certificate").env(
        "CONCH_TLS_CA",
      ),
    )
    .addOption(new Option("--tls-cert <file>", "PEM client certificate (mTLS)").env("CONCH_TLS_CERT"))
    .addOption(new Option("--tls-key <file>", "PEM private key of --tls-cert").env("CONCH_TLS_KEY"))
    .addOption(
      new Option(
        "--tls-insecure",
        "TESTING ONLY: accept any broker certificate (anyone on the path can read and change the traffic)",
      ),
    )
    .addOption(
      new Option("--sasl-mechanism <mechanism>", "log in with SASL")
        .choices(SASL_MECHANISM_CHOICES)
        .env("CONCH_SASL_MECHANISM"),
    )
    .addOption(new Option("--sasl-username <name>", "SASL user name").env("CONCH_SASL_USERNAME"))
    .addOption(
      new Option(
        "--sasl-password-file <file>",
        "file holding the SASL password (its first line); or set CONCH_SASL_PASSWORD",
      ).env("CONCH_SASL_PASSWORD_FILE"),
    );
}

/** The SDK's `tls` and `sasl` options for these flags; INVALID_CONFIG when they do not go together. */
export function clientSecurity(
  flags: ClientSecurityFlags,
  env: Record<string, string | undefined> = process.env,
): { tls?: ClientTlsOptions; sasl?: ClientSaslOptions } {
  const out: { tls?: ClientTlsOptions; sasl?: ClientSaslOptions } = {};
  const anyTls =
    flags.tls === true ||
    flags.tlsCa !== undefined ||
    flags.tlsCert !== undefined ||
    flags.tlsKey !== undefined ||
    flags.tlsInsecure === true;
  if (anyTls) {
    const tls: ClientTlsOptions = {};
    if (flags.tlsCa !== undefined) tls.ca = readFileSync(flags.tlsCa);
    if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
      throw new ConchError(ErrorCode.INVALID_CONFIG, "--tls-cert and --tls-key go together");
    }
    if (flags.tlsCert !== undefined) tls.cert = readFileSync(flags.tlsCert);
    if (flags.tlsKey !== undefined) tls.key = readFileSync(flags.tlsKey);
    if (flags.tlsInsecure === true) {
      tls.insecureSkipVerify = true;
      process.stderr.write("warning: --tls-insecure: the broker's certificate is not checked\n");
    }
    out.tls = tls;
  }
  if (flags.saslMechanism !== undefined || flags.saslUsername !== undefined) {
    if (flags.saslMechanism === undefined || flags.saslUsername === undefined) {
      throw new ConchError(ErrorCode.INVALID_CONFIG, "--sasl-mechanism and --sasl-username go together");
    }
    out.sasl = {
      mechanism: flags.saslMechanism,
      username: flags.saslUsername,
      password: saslPassword(flags, env),
    };
  }
  return out;
}

function saslPassword(flags: ClientSecurityFlags, env: Record<string, string | undefined>): string {
  return passwordInput(flags.saslPasswordFile, "--sasl-password-file", "CONCH_SASL_PASSWORD", env);
}

/**
 * The broker's log options (`logLevel`, `logFormat`): the CLI's own, not broker settings, but taken
 * like them from the first source that has one: the flag, the `CONCH_LOG_*` variable (empty counts
 * as unset), the config file, the default. A bad value fails with INVALID_CONFIG naming its source.
 */
import { enumValue } from "../broker/config-values.js";
import { ConchError, ErrorCode } from "../format/errors.js";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export const LOG_FORMATS = ["json", "pretty"] as const;

export interface LogOptions {
  logLevel: (typeof LOG_LEVELS)[number];
  /** Undefined: pretty on a terminal, JSON otherwise. */
  logFormat?: (typeof LOG_FORMATS)[number];
}

interface LogOption {
  key: keyof LogOptions;
  flag: string;
  env: string;
  parse: (raw: unknown) => string;
}

const OPTIONS: readonly LogOption[] = [
  { key: "logLevel", flag: "--log-level", env: "CONCH_LOG_LEVEL", parse: enumValue(LOG_LEVELS) },
  { key: "logFormat", flag: "--log-format", env: "CONCH_LOG_FORMAT", parse: enumValue(LOG_FORMATS) },
];

/** The config file keys these options take. */
export const LOG_OPTION_KEYS: readonly string[] = OPTIONS.map((o) => o.key);

export function resolveLogOptions(
  flags: Record<string, unknown>,
  env: Record<string, string | undefined>,
  file: { path: string; values: Record<string, unknown> } | null,
): LogOptions {
  const result: Record<string, string> = { logLevel: "info" };
  for (const o of OPTIONS) {
    const fromEnv = env[o.env];
    const [raw, source] =
      flags[o.key] !== undefined
        ? [flags[o.key], o.flag]
        : fromEnv !== undefined && fromEnv !== ""
          ? [fromEnv, o.env]
          : [file?.values[o.key], `config file ${file?.path}`];
    if (raw === undefined) continue;
    try {
      result[o.key] = o.parse(raw);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ConchError(ErrorCode.INVALID_CONFIG, `invalid setting ${o.key} (from ${source}): ${why}`);
    }
  }
  return result as unknown as LogOptions;
}

/**
 * Parsers for option values shared by several commands. Each throws commander's
 * InvalidArgumentError, which the program reports as a usage error (exit 2).
 */
import { InvalidArgumentError, Option } from "commander";
import { CODEC_NAMES } from "../format/codecs/index.js";

export const DEFAULT_BROKER = "127.0.0.1:7420";

export interface BrokerAddress {
  host: string;
  port: number;
}

/** `host:port`, `[v6]:port` or a bare `host` (port 7420). */
export function parseBrokerAddress(text: string): BrokerAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*))(?::(\d+))?$/.exec(text.trim());
  const host = m?.[1] ?? m?.[2] ?? "";
  const port = m?.[3] === undefined ? 7420 : Number(m[3]);
  if (!m || host === "" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidArgumentError(`expected host:port, got "${text}"`);
  }
  return { host, port };
}

/** An integer in [min, max]. */
export function integerParser(min: number, max = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return (text) => {
    const n = Number(text);
    if (text.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `${min}..${max}`;
      throw new InvalidArgumentError(`expected an integer ${range}, got "${text}"`);
    }
    return n;
  };
}

/** Accumulates repeated `--config key=value` options into one record. */
export function collectConfig(text: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got "${text}"`);
  return { ...previous, [text.slice(0, eq).trim()]: text.slice(eq + 1).trim() };
}

export type StartPosition =
  | { kind: "earliest" }
  | { kind: "latest" }
  | { kind: "offset"; offset: number }
  | { kind: "timestamp"; timestampMs: number };

/** `earliest`, `latest`, an offset, or `@<milliseconds since the epoch>`. */
export function parseStartPosition(text: string): StartPosition {
  if (text === "earliest" || text === "latest") return { kind: text };
  const isTime = text.startsWith("@");
  const digits = isTime ? text.slice(1) : text;
  const n = Number(digits);
  if (!/^\d+$/.test(digits) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`expected earliest, latest, an offset or @<timestamp-ms>, got "${text}"`);
  }
  return isTime ? { kind: "timestamp", timestampMs: n } : { kind: "offset", offset: n };
}

export const ACKS = ["none", "leader", "durable", "all"] as const;

/** `--compression <codec>`: the producer's codec for each batch (docs/format.md). */
export function compressionOption(): Option {
  return new Option("--compression <codec>", "compress each batch with this codec")
    .choices(CODEC_NAMES)
    .default("none");
}
export type AcksName = (typeof ACKS)[number];

/** The wire value of an acks name (docs/protocol.md, Produce). */
export function acksLevel(name: AcksName): 0 | 1 | 2 | 3 {
  return name === "none" ? 0 : name === "leader" ? 1 : name === "durable" ? 2 : 3;
}

/**
 * A separator given on the command line; `\t` and `\n`-style escapes are understood because
 * a literal tab is awkward to type.
 */
export function parseSeparator(text: string): Buffer {
  const unescaped = text.replace(/\\([tn\\])/g, (_, c: string) =>
    c === "t" ? "\t" : c === "n" ? "\n" : "\\",
  );
  if (unescaped === "") throw new InvalidArgumentError("the separator must not be empty");
  if (unescaped.includes("\n")) throw new InvalidArgumentError("the separator cannot contain a newline");
  return Buffer.from(unescaped, "utf8");
}

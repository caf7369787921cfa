/**
 * Parsers for setting values, shared by the broker settings and the per-topic configs. Values come
 * from command-line flags and environment variables (strings), JSON config files (numbers, booleans,
 * strings) and the wire (strings), so every parser takes `unknown` and is strict: "12abc", "1e3",
 * "0x10" and " 5" are all refused rather than guessed at. A parser returns the value or throws a
 * plain Error whose message completes "expected ..., got ..."; the caller adds which setting it was.
 */

export type ValueParser<T> = (raw: unknown) => T;

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function shown(raw: unknown): string {
  return typeof raw === "string" ? JSON.stringify(raw) : String(raw);
}

/**
 * An integer in [min, max]; with `orMinusOne`, -1 is accepted too (meaning "no limit"/"forever").
 */
export function integerValue(min: number, max: number, orMinusOne = false): ValueParser<number> {
  const expected = `${orMinusOne ? "-1 or " : ""}an integer from ${min} to ${max}`;
  return (raw) => {
    let n: number;
    if (typeof raw === "number") n = raw;
    else if (typeof raw === "string" && INTEGER.test(raw)) n = Number(raw);
    else throw new Error(`expected ${expected}, got ${shown(raw)}`);
    if (!Number.isSafeInteger(n)) throw new Error(`expected ${expected}, got ${shown(raw)}`);
    if (orMinusOne && n === -1) return n;
    if (n < min || n > max) throw new Error(`expected ${expected}, got ${shown(raw)}`);
    return n;
  };
}

/** One of a fixed set of strings. */
export function enumValue<T extends string>(choices: readonly T[]): ValueParser<T> {
  const expected = choices.map((c) => JSON.stringify(c)).join(", ");
  return (raw) => {
    if (typeof raw === "string" && (choices as readonly string[]).includes(raw)) return raw as T;
    throw new Error(`expected one of ${expected}, got ${shown(raw)}`);
  };
}

/** true/false; from text also 1/0, yes/no, on/off (any case), as environment variables are written. */
export function booleanValue(): ValueParser<boolean> {
  return (raw) => {
    if (typeof raw === "boolean") return raw;
    if (typeof raw === "string") {
      const s = raw.toLowerCase();
      if (s === "true" || s === "1" || s === "yes" || s === "on") return true;
      if (s === "false" || s === "0" || s === "no" || s === "off") return false;
    }
    throw new Error(`expected true or false, got ${shown(raw)}`);
  };
}

/**
 * A non-empty string with no NUL byte (every string here ends up as a path or a host name); with
 * `emptyAllowed`, "" too, for a setting whose empty value means "as another setting".
 */
export function textValue(emptyAllowed = false): ValueParser<string> {
  return (raw) => {
    if (typeof raw !== "string" || (raw.length === 0 && !emptyAllowed) || raw.includes("\0")) {
      throw new Error(`expected a non-empty string, got ${shown(raw)}`);
    }
    return raw;
  };
}

/**
 * A pino destination that prints each JSON log line as one human-readable line:
 *
 *   12:34:56.789 INFO  conch broker listening on 127.0.0.1:7420 (data ./data, flush interval)
 *   12:34:57.002 WARN  segment recovered  topic=orders partition=0 truncatedBytes=120
 *
 * Used when the broker's output is a terminal; everywhere else the broker logs plain JSON lines.
 * (pino-pretty would do this too, with a dozen dependencies for a few dozen lines of formatting.)
 */
import type { Writable } from "node:stream";

const LEVELS: Record<number, [name: string, color: string]> = {
  10: ["TRACE", "90"],
  20: ["DEBUG", "36"],
  30: ["INFO ", "32"],
  40: ["WARN ", "33"],
  50: ["ERROR", "31"],
  60: ["FATAL", "35"],
};
/** Fields every line has, shown in the line's fixed part or not at all. */
const HIDDEN = new Set(["level", "time", "msg", "pid", "hostname"]);

export class PrettyLogDestination {
  #out: Writable;
  #color: boolean;

  constructor(out: Writable, color: boolean) {
    this.#out = out;
    this.#color = color;
  }

  /** pino's destination contract: one JSON document (ending in a newline) per call. */
  write(line: string): void {
    this.#out.write(formatLogLine(line, this.#color));
  }
}

export function formatLogLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith("\n") ? line : `${line}\n`;
  }
  const time = typeof entry.time === "number" ? localTime(entry.time) : "";
  const [name, code] = LEVELS[Number(entry.level)] ?? [String(entry.level).padEnd(5), "0"];
  const level = color ? `\x1b[${code}m${name}\x1b[0m` : name;
  let text = `${time} ${level} ${typeof entry.msg === "string" ? entry.msg : ""}`;
  let err = "";
  for (const key of Object.keys(entry)) {
    if (HIDDEN.has(key)) continue;
    const value = entry[key];
    if (key === "err" && value !== null && typeof value === "object" && "stack" in value) {
      err = `\n    ${String(value.stack).replace(/\n/g, "\n    ")}`;
      continue;
    }
    const shown = typeof value === "string" && !/[\s"=]/.test(value) ? value : JSON.stringify(value);
    text += color ? `  \x1b[90m${key}=\x1b[0m${shown}` : `  ${key}=${shown}`;
  }
  return `${text}${err}\n`;
}

/** HH:MM:SS.mmm in local time: what a person at the terminal compares with their clock. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

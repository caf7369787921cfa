/**
 * Rate limits repeated log lines: the first line of a kind is written, the ones that follow within
 * `intervalMs` are only counted, and when the interval ends a single line says how many were left
 * out ("... (repeated N times in 10 s)"). A full disk fails every write, a scanner opens a thousand
 * bad connections: without this, either writes a line each, and the log drowns what matters.
 *
 * Kinds are keys chosen by the caller, a fixed set of strings (not a topic or an address, which
 * would grow the table without bound). Used by storage, broker and server logging; it lives here,
 * in the lowest layer that logs.
 */
import type { Logger } from "pino";

export type LimitedLevel = "error" | "warn" | "info";

interface Window {
  /** When the current interval ends (performance.now() time). */
  until: number;
  /** Lines left out in this interval, and the level and message of the last of them. */
  suppressed: number;
  level: LimitedLevel;
  msg: string;
  timer: NodeJS.Timeout | null;
}

export const DEFAULT_LOG_INTERVAL_MS = 10_000;

export class LogLimiter {
  readonly intervalMs: number;
  #windows = new Map<string, Window>();

  constructor(intervalMs = DEFAULT_LOG_INTERVAL_MS) {
    this.intervalMs = intervalMs;
  }

  /** Writes `msg` to `logger` unless a line of kind `key` was written less than an interval ago. */
  log(logger: Logger | undefined, level: LimitedLevel, key: string, fields: object, msg: string): void {
    if (logger === undefined) return;
    const now = performance.now();
    const w = this.#windows.get(key);
    if (w !== undefined && now < w.until) {
      w.suppressed++;
      w.level = level;
      w.msg = msg;
      if (w.timer === null) {
        w.timer = setTimeout(() => this.#summarise(logger, w), w.until - now);
        w.timer.unref();
      }
      return;
    }
    if (w === undefined) {
      this.#windows.set(key, { until: now + this.intervalMs, suppressed: 0, level, msg, timer: null });
    } else {
      w.until = now + this.intervalMs;
    }
    logger[level](fields, msg);
  }

  /** An interval ended with lines left out: one line says how many, and a new interval starts. */
  #summarise(logger: Logger, w: Window): void {
    const n = w.suppressed;
    w.timer = null;
    w.suppressed = 0;
    w.until = performance.now() + this.intervalMs;
    logger[w.level]({ repeated: n }, `${w.msg} (repeated ${n} times in ${this.intervalMs / 1000} s)`);
  }
}

/** The limiter of the storage layer's repeated failures, shared by every partition log. */
export const storageLogLimiter = new LogLimiter();

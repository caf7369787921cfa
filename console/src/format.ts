/** Numbers for people: 12.3k msg/s, 4.2 MiB, 2026-12-01 15:04:05.123. */
const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat("en");

export function count(n: number): string {
  return Math.abs(n) < 10_000 ? whole.format(n) : compact.format(n);
}

/** What a figure the broker does not know shows as (cluster mode: a leader that did not answer). */
export const UNKNOWN = "?";

export function exact(n: number | null): string {
  return n === null ? UNKNOWN : whole.format(n);
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function bytes(n: number | null): string {
  if (n === null) return UNKNOWN;
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[u]}`;
}

export function rate(perSec: number, unit = "msg/s"): string {
  return `${count(perSec)} ${unit}`;
}

export function time(ms: number): string {
  const d = new Date(ms);
  const p = (x: number, n = 2) => String(x).padStart(n, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** A retention or other duration in ms; -1 is "forever". */
export function duration(ms: number): string {
  if (ms < 0) return "forever";
  const steps: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ];
  for (const [size, unit] of steps) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  for (const [size, unit] of steps) if (ms >= size) return `${(ms / size).toFixed(1)} ${unit}`;
  return `${ms} ms`;
}

/** 1234567 -> "1,234,567" */
export function thousands(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Microseconds as milliseconds with sensible precision. */
export function usToMs(us: number): string {
  const ms = us / 1000;
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  return ms.toFixed(2);
}

export function fixed(n: number | undefined, digits: number): string {
  return n === undefined || Number.isNaN(n) ? "–" : n.toFixed(digits);
}

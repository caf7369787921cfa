/**
 * Read buffers for the scans of recovery (segment-scan.ts, batch-search.ts), kept for the next
 * scan instead of allocated per scan: a broker opening 10,000 partitions after a crash scanned each
 * one's tail with two fresh 1 MiB buffers, 20 GB of allocations that the garbage collector spent a
 * quarter of the open on. At most MAX_KEPT are kept (partition logs open 32 at a time).
 */
export const SCAN_BUFFER_BYTES = 256 * 1024;
const MAX_KEPT = 32;
const kept: Buffer[] = [];

/** A buffer of SCAN_BUFFER_BYTES, to be handed back with `releaseScanBuffer` when the scan ends. */
export function takeScanBuffer(): Buffer {
  return kept.pop() ?? Buffer.allocUnsafeSlow(SCAN_BUFFER_BYTES);
}

/** Hands back a buffer from `takeScanBuffer`; nothing may read or write it afterwards. */
export function releaseScanBuffer(buf: Buffer): void {
  if (kept.length < MAX_KEPT) kept.push(buf);
}

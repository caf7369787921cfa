/**
 * How many bytes this process has had read from the disk so far: `read_bytes` of /proc/self/io
 * (Linux), which counts what the block layer fetched for it, and not what the page cache served.
 * The log reader reads it around a read through the cache to tell a cold read from one that was
 * only slow to be answered (a busy event loop or thread pool). -1 where there is no such file.
 */
import { closeSync, openSync, readSync } from "node:fs";

const FIELD = "read_bytes: ";
/** /proc/self/io is a few hundred bytes. */
const buf = Buffer.alloc(1024);
/** The open file (read again at position 0 each time); -1 when it could not be opened. */
let fd: number | undefined;

export function diskReadBytes(): number {
  if (fd === undefined) {
    try {
      fd = openSync("/proc/self/io", "r");
    } catch {
      fd = -1;
    }
  }
  if (fd < 0) return -1;
  let n: number;
  try {
    n = readSync(fd, buf, 0, buf.length, 0);
  } catch {
    closeSync(fd);
    fd = -1;
    return -1;
  }
  const at = buf.indexOf(FIELD, 0, "latin1");
  if (at < 0 || at >= n) return -1;
  let value = 0;
  for (let i = at + FIELD.length; i < n; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

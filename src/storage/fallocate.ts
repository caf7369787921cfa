/**
 * Reserving disk blocks for a preallocated segment. Node has no fallocate(2): util-linux's
 * `fallocate` runs in the storage layer's shell helper (line-helper.ts), one request a line
 * (`<offset> <length> <path>`). It runs `fallocate -o <offset> -l <length> -- <path>`: mode 0
 * allocates unwritten extents for the holes and changes no data; the file is already that long,
 * so its size does not change either.
 *
 * Without `sh` or `fallocate`, or on a file system that refuses, every answer is false and the file
 * stays sparse (blocks are then allocated as data is written).
 */
import { LineHelper } from "./line-helper.js";

// `read` puts the first two words in offset and size and the rest of the line, spaces included, in path.
const helper = new LineHelper(
  'while read -r offset size path; do if fallocate -o "$offset" -l "$size" -- "$path" 2>/dev/null; then echo ok; else echo no; fi; done',
);

/**
 * Asks the helper to reserve blocks for bytes [offset, bytes) of `path`; resolves true when it did,
 * false when it did not or `signal` withdrew the request before its turn.
 */
export function fallocate(path: string, bytes: number, offset = 0, signal?: AbortSignal): Promise<boolean> {
  if (offset >= bytes) return Promise.resolve(true);
  if (path.trim() !== path) return Promise.resolve(false);
  return helper.ask(`${offset} ${bytes - offset} ${path}`, signal);
}

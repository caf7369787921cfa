/**
 * gzip (codec 1) with node:zlib. `maxOutputLength` makes zlib stop at the bound instead of growing
 * its output without limit. Concatenated gzip members (which some writers produce) read as one.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { corruptInput, outputTooLarge } from "./codec-errors.js";

export function gzipCompress(input: Uint8Array): Buffer {
  return gzipSync(input);
}

export function gzipDecompress(input: Uint8Array, maxOutputBytes: number): Buffer {
  // zlib reads no input as no output; no gzip writer produces that.
  if (input.length === 0) throw corruptInput("gzip", "no data");
  try {
    // zlib refuses a maxOutputLength of 0; an empty output is still allowed through the check below.
    const out = gunzipSync(input, { maxOutputLength: Math.max(1, maxOutputBytes) });
    if (out.length > maxOutputBytes) throw outputTooLarge("gzip", maxOutputBytes);
    return out;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw outputTooLarge("gzip", maxOutputBytes);
    if (typeof code === "string" && code.startsWith("Z_")) throw corruptInput("gzip", (err as Error).message);
    throw err;
  }
}

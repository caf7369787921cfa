/**
 * Compression codecs by Kafka's (and Conch's) codec numbers: 0 none, 1 gzip, 2 snappy, 3 lz4,
 * 4 zstd. Decompression is bounded before it allocates: a stream that would inflate past
 * `maxOutputBytes` is refused, so a small compressed batch cannot make the broker allocate
 * gigabytes. gzip is node:zlib's; the other codecs are not built in here and refuse with
 * UNSUPPORTED_COMPRESSION.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { ConchError, ErrorCode } from "../errors.js";

export type CodecId = 0 | 1 | 2 | 3 | 4; // none, gzip, snappy, lz4, zstd

const NAMES = ["none", "gzip", "snappy", "lz4", "zstd"] as const;

/** The codec's name, as Kafka's `compression.type` spells it. */
export function codecName(codec: CodecId): string {
  return NAMES[codec];
}

export function compress(codec: CodecId, input: Uint8Array): Buffer {
  if (codec === 0) return Buffer.from(input);
  if (codec === 1) return gzipSync(input);
  throw unsupported(codec);
}

/** Throws ConchError: UNSUPPORTED_COMPRESSION, or CORRUPT_BATCH for bad or oversized input. */
export function decompress(codec: CodecId, input: Uint8Array, maxOutputBytes: number): Buffer {
  if (codec === 0) {
    if (input.length > maxOutputBytes) throw tooLarge(codec, maxOutputBytes);
    return Buffer.from(input);
  }
  if (codec !== 1) throw unsupported(codec);
  try {
    return gunzipSync(input, { maxOutputLength: Math.max(1, maxOutputBytes) });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(codec, maxOutputBytes);
    throw new ConchError(ErrorCode.CORRUPT_BATCH, `${NAMES[codec]} data does not decompress`, { cause: err });
  }
}

function unsupported(codec: CodecId): ConchError {
  return new ConchError(
    ErrorCode.UNSUPPORTED_COMPRESSION,
    `${NAMES[codec] ?? `codec ${codec}`} compression is not supported by this broker`,
  );
}

function tooLarge(codec: CodecId, max: number): ConchError {
  return new ConchError(
    ErrorCode.BATCH_TOO_LARGE,
    `${NAMES[codec]} data decompresses to more than ${max} bytes`,
  );
}

/**
 * Compression codecs, numbered as in the batch attributes' bits 0-2 (docs/format.md), which are
 * also Kafka's numbers. Each codec is its own module; the native packages behind snappy, lz4 and
 * zstd load on first use (native-module.ts). `decompress` is bounded: it throws a ConchError
 * (BATCH_TOO_LARGE) rather than produce, or allocate for, more than `maxOutputBytes`, and a
 * ConchError (CORRUPT_BATCH) for malformed input; it never hangs.
 */
import { ConchError, ErrorCode } from "../errors.js";
import { outputTooLarge } from "./codec-errors.js";
import { gzipCompress, gzipDecompress } from "./gzip.js";
import { lz4Compress, lz4Decompress } from "./lz4.js";
import { snappyCompress, snappyDecompress } from "./snappy.js";
import { zstdCompress, zstdDecompress } from "./zstd.js";

export type CodecId = 0 | 1 | 2 | 3 | 4; // none, gzip, snappy, lz4, zstd: Kafka's numbers too
export type CodecName = "none" | "gzip" | "snappy" | "lz4" | "zstd";
export const CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"] as const satisfies readonly CodecName[];

/** The codec named `name` (as in CODEC_NAMES); throws UNSUPPORTED_COMPRESSION for anything else. */
export function codecFromName(name: string): CodecId {
  const id = (CODEC_NAMES as readonly string[]).indexOf(name);
  if (id < 0) {
    throw new ConchError(
      ErrorCode.UNSUPPORTED_COMPRESSION,
      `unknown compression codec ${JSON.stringify(name)}: expected one of ${CODEC_NAMES.join(", ")}`,
    );
  }
  return id as CodecId;
}

/** Whether `n` (attribute bits 0-2, or a Kafka batch's) names a codec this version has. */
export function isCodecId(n: number): n is CodecId {
  return n >= 0 && n <= 4 && Number.isInteger(n);
}

/** `input` compressed with `codec`; for none, a view of the same bytes. */
export function compress(codec: CodecId, input: Uint8Array): Buffer {
  switch (codec) {
    case 0:
      return Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    case 1:
      return gzipCompress(input);
    case 2:
      return snappyCompress(input);
    case 3:
      return lz4Compress(input);
    case 4:
      return zstdCompress(input);
    default:
      throw unknownCodec(codec);
  }
}

/**
 * Bounded: throws a ConchError (not a crash, not an allocation beyond the bound) when the output
 * would exceed maxOutputBytes or the input is malformed. For none, a view of the same bytes.
 */
export function decompress(codec: CodecId, input: Uint8Array, maxOutputBytes: number): Buffer {
  switch (codec) {
    case 0:
      if (input.length > maxOutputBytes) throw outputTooLarge("uncompressed", maxOutputBytes, input.length);
      return Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    case 1:
      return gzipDecompress(input, maxOutputBytes);
    case 2:
      return snappyDecompress(input, maxOutputBytes);
    case 3:
      return lz4Decompress(input, maxOutputBytes);
    case 4:
      return zstdDecompress(input, maxOutputBytes);
    default:
      throw unknownCodec(codec);
  }
}

function unknownCodec(codec: number): ConchError {
  return new ConchError(ErrorCode.UNSUPPORTED_COMPRESSION, `unknown compression codec ${codec}`);
}

/** The two ways a decompression fails, as typed errors with stable codes. */
import { ConchError, ErrorCode } from "../errors.js";

/** Malformed compressed bytes: refused like a batch whose CRC does not match. */
export function corruptInput(codec: string, why: string): ConchError {
  return new ConchError(ErrorCode.CORRUPT_BATCH, `${codec} data is corrupt: ${why}`);
}

/** The output would pass the bound: refused before it is allocated (or as soon as it passes). */
export function outputTooLarge(codec: string, maxOutputBytes: number, claimed?: number): ConchError {
  const size = claimed === undefined ? "" : ` (${claimed} bytes claimed)`;
  return new ConchError(
    ErrorCode.BATCH_TOO_LARGE,
    `${codec} data decompresses to more than ${maxOutputBytes} bytes${size}`,
  );
}

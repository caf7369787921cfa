/**
 * A batch's CRC32C covers every byte of the batch except the two fields that are not the producer's
 * to fix: the base offset (stamped by the broker) and the CRC itself. So stamping an offset never
 * needs a new checksum, and a flipped bit anywhere else (sizes, timestamps, records) is caught.
 */
import { crc32c } from "@node-rs/crc32";
import { ATTRIBUTES_AT, CRC_AT, KEY_SIZE_AT, OFFSET_AT } from "./layout.js";

/** CRC32C of the batch occupying buf[at, end). */
export function batchCrc(buf: Uint8Array, at: number, end: number): number {
  let crc = crc32c(buf.subarray(at, at + OFFSET_AT));
  crc = crc32c(buf.subarray(at + KEY_SIZE_AT, at + CRC_AT), crc);
  return crc32c(buf.subarray(at + ATTRIBUTES_AT, end), crc);
}

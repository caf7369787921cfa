/**
 * A batch's CRC32C covers every byte of the batch except the two fields that are not the producer's
 * to fix: the base offset (stamped by the broker) and the CRC itself. So stamping an offset never
 * needs a new checksum, and a flipped bit anywhere else (sizes, timestamps, records) is caught.
 */
import { crc32c } from "@node-rs/crc32";
import { ATTRIBUTES_AT, CRC_AT, KEY_SIZE_AT, OFFSET_AT } from "./layout.js";
import { readU32 } from "./u64.js";

/** The two covered ranges before the batch's attributes: [0, OFFSET_AT) and [KEY_SIZE_AT, CRC_AT). */
const HEAD_TAIL_BYTES = CRC_AT - KEY_SIZE_AT;
const head = Buffer.alloc(OFFSET_AT + HEAD_TAIL_BYTES);

/**
 * CRC32C of the batch occupying buf[at, end). The two short header ranges are copied into one
 * scratch buffer (21 bytes), so they cost one native call and no view: for a batch of a dozen
 * small records, 520 ns against 700 with a view per range, and almost no garbage.
 */
export function batchCrc(buf: Uint8Array, at: number, end: number): number {
  for (let i = 0; i < OFFSET_AT; i++) head[i] = buf[at + i]!;
  const from = at + KEY_SIZE_AT;
  for (let i = 0; i < HEAD_TAIL_BYTES; i++) head[OFFSET_AT + i] = buf[from + i]!;
  return crc32c(buf.subarray(at + ATTRIBUTES_AT, end), crc32c(head));
}

/**
 * Whether the batch occupying buf[at, end) carries the CRC32C of its bytes: the one check a reader
 * makes on fetched bytes (the broker checked every field when it stored them). `end - at` must be
 * at least a batch header and its metadata.
 */
export function batchCrcMatches(buf: Uint8Array, at: number, end: number): boolean {
  return readU32(buf, at + CRC_AT) === batchCrc(buf, at, end);
}

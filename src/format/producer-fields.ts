/**
 * A batch's idempotent-producer fields (docs/format.md, "The metadata block"): producer id, epoch
 * and base sequence, read and written in place. `producerFieldsValid` is checkBatch's rule for
 * them; the readers below trust a batch that passed it.
 */
import { batchCrc } from "./crc.js";
import {
  BASE_SEQUENCE_AT,
  CRC_AT,
  MAX_PRODUCER_EPOCH,
  MAX_SEQUENCE,
  NO_PRODUCER_ID_HALF,
  PRODUCER_EPOCH_AT,
  PRODUCER_ID_AT,
} from "./layout.js";
import { readU16, readU32, writeU16, writeU32, writeU64 } from "./u64.js";

/** "No producer id", as the readers return it. */
export const NO_PRODUCER_ID = -1;
/** The largest producer id: ids are exact JavaScript numbers. */
export const MAX_PRODUCER_ID = Number.MAX_SAFE_INTEGER;

const TWO_32 = 0x1_0000_0000;
const SEQUENCE_SPAN = MAX_SEQUENCE + 1;

/**
 * Without a producer id the epoch is 0 (what readers before epochs required of the field); with
 * one, the id fits in 53 bits, the epoch in 0..32767 and the base sequence in 0..2^31-1.
 */
export function producerFieldsValid(buf: Uint8Array, at: number): boolean {
  const hi = readU32(buf, at + PRODUCER_ID_AT);
  const epoch = readU16(buf, at + PRODUCER_EPOCH_AT);
  if (hi === NO_PRODUCER_ID_HALF && readU32(buf, at + PRODUCER_ID_AT + 4) === NO_PRODUCER_ID_HALF) {
    return epoch === 0;
  }
  return hi <= 0x1fffff && epoch <= MAX_PRODUCER_EPOCH && readU32(buf, at + BASE_SEQUENCE_AT) <= MAX_SEQUENCE;
}

/** The batch's producer id, or NO_PRODUCER_ID. */
export function batchProducerId(buf: Uint8Array, at: number): number {
  // Most batches have none: one byte tells most of those from an id (ids stay below 2^53).
  if (buf[at + PRODUCER_ID_AT] === 0xff && readU32(buf, at + PRODUCER_ID_AT + 4) === NO_PRODUCER_ID_HALF) {
    return NO_PRODUCER_ID;
  }
  const hi = readU32(buf, at + PRODUCER_ID_AT);
  const lo = readU32(buf, at + PRODUCER_ID_AT + 4);
  if (hi === NO_PRODUCER_ID_HALF && lo === NO_PRODUCER_ID_HALF) return NO_PRODUCER_ID;
  return hi * TWO_32 + lo;
}

export function batchProducerEpoch(buf: Uint8Array, at: number): number {
  return readU16(buf, at + PRODUCER_EPOCH_AT);
}

export function batchBaseSequence(buf: Uint8Array, at: number): number {
  return readU32(buf, at + BASE_SEQUENCE_AT);
}

/**
 * Writes producer id, epoch and base sequence (NO_PRODUCER_ID: none, epoch and sequence 0). The
 * CRC covers them: write them before the CRC is computed, or compute it again.
 */
export function writeProducerFields(
  buf: Uint8Array,
  at: number,
  producerId: number,
  epoch: number,
  baseSequence: number,
): void {
  if (producerId === NO_PRODUCER_ID) {
    writeU32(buf, at + PRODUCER_ID_AT, NO_PRODUCER_ID_HALF);
    writeU32(buf, at + PRODUCER_ID_AT + 4, NO_PRODUCER_ID_HALF);
    writeU16(buf, at + PRODUCER_EPOCH_AT, 0);
    writeU32(buf, at + BASE_SEQUENCE_AT, 0);
    return;
  }
  writeU64(buf, at + PRODUCER_ID_AT, producerId);
  writeU16(buf, at + PRODUCER_EPOCH_AT, epoch);
  writeU32(buf, at + BASE_SEQUENCE_AT, baseSequence);
}

/**
 * Marks a finished batch (`buf[at, end)`) as an idempotent producer's and computes its CRC again:
 * for a producer that learns its sequence numbers only when a batch is first sent.
 */
export function stampProducerFields(
  buf: Uint8Array,
  at: number,
  end: number,
  producerId: number,
  epoch: number,
  baseSequence: number,
): void {
  writeProducerFields(buf, at, producerId, epoch, baseSequence);
  writeU32(buf, at + CRC_AT, batchCrc(buf, at, end));
}

/** The sequence `n` after `sequence`, wrapping after 2^31 - 1 to 0 as Kafka's do. */
export function sequenceAfter(sequence: number, n: number): number {
  return (sequence + n) % SEQUENCE_SPAN;
}

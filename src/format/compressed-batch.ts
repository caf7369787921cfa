/**
 * Compressed batches (attribute bits 0-2, docs/format.md): the header and metadata stay as they
 * are, and the payload, the inner records, is one block compressed with the codec; `payload size`
 * is the compressed size and the CRC covers the stored, compressed bytes. A producer compresses a
 * finished batch (`compressBatch`); readers expand compressed batches back into ordinary ones
 * (`decompressBatch`, `expandBatches`) before walking their records, so offsets, keys and values
 * read as from any batch.
 */
import { type CodecId, compress, decompress } from "./codecs/index.js";
import { batchCrc } from "./crc.js";
import {
  ATTRIBUTES_AT,
  BATCH_RECORDS_AT,
  COMPRESSION_MASK,
  COMPRESSION_NONE,
  CRC_AT,
  HEADER_SIZE,
  KEY_SIZE_AT,
  PAYLOAD_SIZE_AT,
} from "./layout.js";
import { readU16, readU32, writeU16, writeU32 } from "./u64.js";

/** The codec of the batch at `at` (attribute bits 0-2). */
export function batchCodec(buf: Uint8Array, at: number): number {
  return readU16(buf, at + ATTRIBUTES_AT) & COMPRESSION_MASK;
}

/**
 * The uncompressed batch `batch` (as BatchBuilder finishes it) with its payload compressed with
 * `codec`, in a new buffer; for none, `batch` itself.
 */
export function compressBatch(batch: Uint8Array, codec: CodecId): Buffer {
  const src = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength);
  if (codec === 0) return src;
  const packed = compress(codec, src.subarray(BATCH_RECORDS_AT));
  return sealed(src, 0, packed, readU16(src, ATTRIBUTES_AT) | codec);
}

/**
 * The compressed batch at buf[at, ...) as an uncompressed one in a new buffer: same header (base
 * offset included), codec bits cleared, payload size and CRC of the decompressed records. The
 * records may take at most `maxBatchBytes` - 49 bytes; more, or bytes that do not decompress,
 * throw a ConchError (BATCH_TOO_LARGE, CORRUPT_BATCH). The records' own framing is not checked
 * here: readers walk them with RecordCursor, which checks what it relies on.
 */
export function decompressBatch(buf: Uint8Array, at: number, maxBatchBytes: number): Buffer {
  const end = at + BATCH_RECORDS_AT + readU32(buf, at + PAYLOAD_SIZE_AT);
  const codec = batchCodec(buf, at) as CodecId;
  const records = decompress(
    codec,
    buf.subarray(at + BATCH_RECORDS_AT, end),
    maxBatchBytes - BATCH_RECORDS_AT,
  );
  return sealed(buf, at, records, readU16(buf, at + ATTRIBUTES_AT) & ~COMPRESSION_MASK);
}

/**
 * The whole batches in buf[start, end) with every compressed one expanded (`decompressBatch`);
 * when none is compressed, `buf.subarray(start, end)` itself, so uncompressed reads cost one header
 * read per batch. Bytes after the last whole batch (a fetch cut mid-batch) are kept as they are.
 */
export function expandBatches(buf: Buffer, start: number, end: number, maxBatchBytes: number): Buffer {
  let at = start;
  for (let size = wholeBatchSize(buf, at, end); size > 0; size = wholeBatchSize(buf, at, end)) {
    if (batchCodec(buf, at) !== COMPRESSION_NONE) break;
    at += size;
  }
  if (wholeBatchSize(buf, at, end) < 0) return buf.subarray(start, end);
  const parts: Buffer[] = [buf.subarray(start, at)];
  for (let size = wholeBatchSize(buf, at, end); size > 0; size = wholeBatchSize(buf, at, end)) {
    parts.push(
      batchCodec(buf, at) === COMPRESSION_NONE
        ? buf.subarray(at, at + size)
        : decompressBatch(buf, at, maxBatchBytes),
    );
    at += size;
  }
  if (at < end) parts.push(buf.subarray(at, end));
  return Buffer.concat(parts);
}

/** The size of the batch at `at` when a whole one (header readable, all its bytes) ends by `end`, else -1. */
function wholeBatchSize(buf: Uint8Array, at: number, end: number): number {
  if (end - at < BATCH_RECORDS_AT || readU32(buf, at + KEY_SIZE_AT) !== BATCH_RECORDS_AT - HEADER_SIZE)
    return -1;
  const size = BATCH_RECORDS_AT + readU32(buf, at + PAYLOAD_SIZE_AT);
  return size <= end - at ? size : -1;
}

/** A batch of `header`'s header at `at` with `records` as its payload, these attributes, and its CRC. */
function sealed(header: Uint8Array, at: number, records: Uint8Array, attributes: number): Buffer {
  const out = Buffer.allocUnsafe(BATCH_RECORDS_AT + records.length);
  out.set(header.subarray(at, at + BATCH_RECORDS_AT), 0);
  out.set(records, BATCH_RECORDS_AT);
  writeU16(out, ATTRIBUTES_AT, attributes);
  writeU32(out, PAYLOAD_SIZE_AT, records.length);
  writeU32(out, CRC_AT, batchCrc(out, 0, out.length));
  return out;
}

/**
 * Encodes records straight into a batch, with no object per record. Batches are carved one after
 * another out of a shared slab, so a batch costs one small view, not one allocation; a batch that
 * outgrows the slab's remaining room moves to a fresh slab sized for it.
 *
 * With a `pool` (encode-buffer-pool.ts) each batch is encoded into a buffer of its own taken from
 * the pool, moved to a larger one if it outgrows it, and the caller gives the buffer back
 * (`pool.release(batch)`) once it is done with the batch, so a steady producer allocates nothing.
 *
 *   const b = new BatchBuilder();
 *   b.add("value", "key", Date.now());
 *   b.add(null, "key", Date.now(), [["trace-id", "abc"]]); // a tombstone, with a header
 *   const batch = b.finish(); // ready to send; the builder starts the next batch
 *
 * A batch stays in the v1 layout until a record needs the extended one (docs/format.md): then the
 * records already in it are switched over in place, so plain batches cost exactly what they did.
 */
import { batchCrc } from "./crc.js";
import type { EncodeBufferPool } from "./encode-buffer-pool.js";
import {
  ATTRIBUTES_AT,
  BATCH_META_SIZE,
  BATCH_RECORDS_AT,
  COUNT_AT,
  CRC_AT,
  EXTENDED_RECORDS,
  HEADER_SIZE,
  KEY_SIZE_AT,
  MAGIC,
  MAX_TIMESTAMP_MS,
  NULL_SIZE,
  OFFSET_AT,
  PARTITIONED_RECORDS,
  PAYLOAD_SIZE_AT,
  TIMESTAMP_AT,
} from "./layout.js";
import { NO_PRODUCER_ID, writeProducerFields } from "./producer-fields.js";
import { headersBlockSize, type RecordHeaders, writeHeadersBlock } from "./record-headers.js";
import { writeTimestampMs } from "./timestamp.js";
import { readU32, writeU16, writeU32 } from "./u64.js";

export type Bytes = Uint8Array | string;

/**
 * A headers block written from another format in place, for `addRanges`: the Kafka front-end
 * re-encodes a record's varint headers into Conch's fixed-width block (docs/format.md) with one
 * such object per converter, not one per record or header.
 */
export interface HeadersBlockSource {
  /** The current record's headers block size in bytes; 0 when it has no headers. */
  blockSize(): number;
  /** Writes that block at `at` (`target` has room for it) and returns its size. */
  writeBlock(target: Buffer, at: number): number;
}

function checkTimestamp(timestampMs: number): void {
  if (!Number.isInteger(timestampMs) || timestampMs < 0 || timestampMs > MAX_TIMESTAMP_MS) {
    throw new RangeError(`timestamp ${timestampMs} ms is not an integer in 0..2^42-1`);
  }
}

export interface BatchBuilderOptions {
  /** Size of each slab batches are carved from. Default 1 MiB. Ignored with a pool. */
  slabBytes?: number;
  /** Encode each batch into a buffer from this pool instead (see the file comment). */
  pool?: EncodeBufferPool;
  /**
   * Build partitioned batches (attribute bit 5, docs/format.md): records are added with `addTo`,
   * each naming its partition, for Produce version 3. No compression or producer fields.
   */
  partitioned?: boolean;
}

export class BatchBuilder {
  #slabBytes: number;
  readonly #pool: EncodeBufferPool | null;
  #slab: Buffer;
  /** With a pool: the slab went out with the last finished batch; the next batch needs another. */
  #handedOut = false;
  /** Where the batch being built starts in the slab. */
  #start = 0;
  /** The next free byte in the slab. */
  #pos = 0;
  #count = 0;
  /** Whether the batch being built has the extended layout (attribute bit 3). */
  #extended = false;
  /**
   * The largest inner timestamp so far, in ms: comparing the numbers the caller passed is exact
   * (they are integers below 2^42) and cheaper than comparing the stored u64s.
   */
  #maxTimestampMs = -1;
  /** The idempotent producer fields of the batch being built (setProducer); none by default. */
  #producerId = NO_PRODUCER_ID;
  #producerEpoch = 0;
  #baseSequence = 0;
  /** Partitioned batches: what each record's offset field holds is its partition. */
  readonly #partitioned: boolean;
  /** The partition of the record `addTo` is adding; -1 otherwise. */
  #tag = -1;

  constructor(options: BatchBuilderOptions = {}) {
    this.#slabBytes = options.slabBytes ?? 1 << 20;
    this.#pool = options.pool ?? null;
    this.#partitioned = options.partitioned === true;
    this.#slab = this.#pool === null ? Buffer.allocUnsafe(this.#slabBytes) : this.#pool.acquire();
    this.#begin();
  }

  /**
   * With a pool: gives the buffer of an empty batch back to the pool, so an idle builder holds no
   * memory; the next `add` takes another. Does nothing without a pool or when records were added.
   */
  detach(): void {
    if (this.#pool === null || this.#handedOut || this.#count > 0) return;
    this.#pool.release(this.#slab);
    this.#handedOut = true;
  }

  /** Records in the batch being built. */
  get count(): number {
    return this.#count;
  }

  /** Bytes the batch being built would have if finished now. */
  get sizeBytes(): number {
    return this.#pos - this.#start;
  }

  /**
   * Appends one record. `timestampMs` defaults to now; it must be an integer in 0..2^42 - 1, else a
   * RangeError is thrown (anything else would be stored as a wrong time that passes every check).
   * A `null` key or value is null, not empty: a key with a null value is a tombstone. `headers`
   * (see RecordHeaders) that are not headers throw a TypeError. Strings are written as UTF-8.
   * Nothing is written when it throws.
   */
  add(
    value: Bytes | null,
    key: Bytes | null = null,
    timestampMs: number = Date.now(),
    headers: RecordHeaders | null = null,
  ): void {
    checkTimestamp(timestampMs);
    if (this.#partitioned && this.#tag < 0)
      throw new TypeError("a partitioned batch takes records through addTo");
    if (this.#handedOut) this.#begin();
    // The v1 layout, kept small so that it stays the fast path; anything else takes #addExtended.
    if (headers !== null || value === null || this.#extended) {
      this.#addExtended(value, key, timestampMs, headers);
      return;
    }
    const keyLen = key === null ? 0 : typeof key === "string" ? Buffer.byteLength(key) : key.length;
    const valueLen = typeof value === "string" ? Buffer.byteLength(value) : value.length;
    // v1 reads key size 0 as no key and a key with an empty value as a tombstone.
    if (key !== null && (keyLen === 0 || valueLen === 0)) {
      this.#addExtended(value, key, timestampMs, null);
      return;
    }
    this.#ensure(HEADER_SIZE + keyLen + valueLen);
    const slab = this.#slab;
    const p = this.#pos;
    // Written here rather than with #writeHeader: measured, the call cost the fast path ~10%.
    slab[p] = MAGIC;
    writeTimestampMs(slab, p + 1, timestampMs);
    writeU32(slab, p + OFFSET_AT, 0);
    writeU32(slab, p + OFFSET_AT + 4, this.#tag < 0 ? this.#count : this.#tag);
    writeU32(slab, p + KEY_SIZE_AT, keyLen);
    writeU32(slab, p + PAYLOAD_SIZE_AT, valueLen);
    writeU32(slab, p + COUNT_AT, 1);
    let q = p + HEADER_SIZE;
    if (key !== null) q += typeof key === "string" ? writeString(slab, key, q) : copyInto(slab, key, q);
    q += typeof value === "string" ? writeString(slab, value, q) : copyInto(slab, value, q);
    if (timestampMs > this.#maxTimestampMs) this.#maxTimestampMs = timestampMs;
    this.#pos = q;
    this.#count++;
  }

  /**
   * `add` for a partitioned batch: the record is for `partition` (an integer in 0..2^32 - 1, else a
   * RangeError). Throws a TypeError on a builder not made with `partitioned`.
   */
  addTo(
    partition: number,
    value: Bytes | null,
    key: Bytes | null = null,
    timestampMs: number = Date.now(),
    headers: RecordHeaders | null = null,
  ): void {
    if (!this.#partitioned) throw new TypeError("addTo needs a builder made with partitioned: true");
    if (!Number.isInteger(partition) || partition < 0 || partition > 0xffffffff) {
      throw new RangeError(`partition ${partition} is not an integer in 0..2^32-1`);
    }
    this.#tag = partition;
    try {
      this.add(value, key, timestampMs, headers);
    } finally {
      this.#tag = -1;
    }
  }

  /**
   * `add` from byte ranges of `src` (key `src[keyStart, keyEnd)`, empty for no key), with no view
   * made per record: for converters that walk another format in place (the Kafka front-end). A
   * record the v1 layout cannot hold goes through `addRanges`.
   */
  addFrom(
    src: Buffer,
    keyStart: number,
    keyEnd: number,
    valueStart: number,
    valueEnd: number,
    timestampMs: number,
  ): void {
    if (this.#partitioned) throw new TypeError("a partitioned batch takes records through addTo");
    const keyLen = keyEnd - keyStart;
    const valueLen = valueEnd - valueStart;
    if (this.#extended || (keyLen !== 0 && valueLen === 0)) {
      this.addRanges(src, keyLen === 0 ? -1 : keyStart, keyEnd, valueStart, valueEnd, timestampMs, null);
      return;
    }
    checkTimestamp(timestampMs);
    if (this.#handedOut) this.#begin();
    this.#copyRecord(src, keyStart, keyEnd, valueStart, valueEnd, timestampMs, keyLen, valueLen, 1, null);
  }

  /**
   * `addFrom` for any record: a start of -1 is a null key or value (an empty range is an empty
   * one), and `headers` writes the record's headers block (null: none). Records v1 can hold take
   * `addFrom`'s v1 path; others switch the batch to the extended layout. No object per record.
   * Nothing is written when it throws.
   */
  addRanges(
    src: Buffer,
    keyStart: number,
    keyEnd: number,
    valueStart: number,
    valueEnd: number,
    timestampMs: number,
    headers: HeadersBlockSource | null,
  ): void {
    if (this.#partitioned) throw new TypeError("a partitioned batch takes records through addTo");
    const headersLen = headers === null ? 0 : headers.blockSize();
    const keyLen = keyStart < 0 ? 0 : keyEnd - keyStart;
    const valueLen = valueStart < 0 ? 0 : valueEnd - valueStart;
    if (
      !this.#extended &&
      headersLen === 0 &&
      valueStart >= 0 &&
      (keyStart < 0 || (keyLen !== 0 && valueLen !== 0))
    ) {
      this.addFrom(src, Math.max(keyStart, 0), keyStart < 0 ? 0 : keyEnd, valueStart, valueEnd, timestampMs);
      return;
    }
    checkTimestamp(timestampMs);
    if (this.#handedOut) this.#begin();
    if (!this.#extended) this.#extend();
    const keySize = keyStart < 0 ? NULL_SIZE : keyLen;
    const valueSize = valueStart < 0 ? NULL_SIZE : valueLen;
    this.#copyRecord(
      src,
      keyStart,
      keyEnd,
      valueStart,
      valueEnd,
      timestampMs,
      keySize,
      valueSize,
      headersLen,
      headers,
    );
  }

  /**
   * Writes a record copied from ranges of `src` (a start of -1: null, no bytes) with the header's
   * size fields as given: `count` is 1 for a v1 record, else the headers block's size, which
   * `headers` writes.
   */
  #copyRecord(
    src: Buffer,
    keyStart: number,
    keyEnd: number,
    valueStart: number,
    valueEnd: number,
    timestampMs: number,
    keySize: number,
    valueSize: number,
    count: number,
    headers: HeadersBlockSource | null,
  ): void {
    const keyLen = keyStart < 0 ? 0 : keyEnd - keyStart;
    const valueLen = valueStart < 0 ? 0 : valueEnd - valueStart;
    this.#ensure(HEADER_SIZE + keyLen + valueLen + (headers === null ? 0 : count));
    const slab = this.#slab;
    const p = this.#pos;
    this.#writeHeader(p, timestampMs, keySize, valueSize, count);
    let q = p + HEADER_SIZE;
    if (keyLen !== 0) q += src.copy(slab, q, keyStart, keyEnd);
    if (valueLen !== 0) q += src.copy(slab, q, valueStart, valueEnd);
    if (headers !== null && count !== 0) q += headers.writeBlock(slab, q);
    this.#added(q, timestampMs);
  }

  /** `add` for a record in the extended layout: switches the batch to it first if need be. */
  #addExtended(
    value: Bytes | null,
    key: Bytes | null,
    timestampMs: number,
    headers: RecordHeaders | null,
  ): void {
    const headersLen = headers === null ? 0 : headersBlockSize(headers);
    if (headersLen < 0) throw new TypeError("headers must map string keys to strings, bytes or null");
    const keyLen = key === null ? 0 : typeof key === "string" ? Buffer.byteLength(key) : key.length;
    const valueLen = value === null ? 0 : typeof value === "string" ? Buffer.byteLength(value) : value.length;
    if (!this.#extended) {
      // No headers after all (`{}` or `[]`) on a record v1 can hold: it stays a v1 record.
      if (headersLen === 0 && value !== null && (key === null || (keyLen !== 0 && valueLen !== 0))) {
        this.add(value, key, timestampMs, null);
        return;
      }
      this.#extend();
    }
    this.#ensure(HEADER_SIZE + keyLen + valueLen + headersLen);
    const slab = this.#slab;
    const p = this.#pos;
    this.#writeHeader(
      p,
      timestampMs,
      key === null ? NULL_SIZE : keyLen,
      value === null ? NULL_SIZE : valueLen,
      headersLen,
    );
    let q = p + HEADER_SIZE;
    if (key !== null) q += typeof key === "string" ? writeString(slab, key, q) : copyInto(slab, key, q);
    if (value !== null)
      q += typeof value === "string" ? writeString(slab, value, q) : copyInto(slab, value, q);
    if (headersLen !== 0) q += writeHeadersBlock(slab, q, headers!);
    this.#added(q, timestampMs);
  }

  /** Writes an inner record's 29-byte header at `p`: the count field is 1 (v1) or the headers size. */
  #writeHeader(p: number, timestampMs: number, keySize: number, valueSize: number, count: number): void {
    const slab = this.#slab;
    slab[p] = MAGIC;
    writeTimestampMs(slab, p + 1, timestampMs);
    writeU32(slab, p + OFFSET_AT, 0);
    writeU32(slab, p + OFFSET_AT + 4, this.#tag < 0 ? this.#count : this.#tag);
    writeU32(slab, p + KEY_SIZE_AT, keySize);
    writeU32(slab, p + PAYLOAD_SIZE_AT, valueSize);
    writeU32(slab, p + COUNT_AT, count);
  }

  /** Ends the record that was written up to `end`. */
  #added(end: number, timestampMs: number): void {
    if (timestampMs > this.#maxTimestampMs) this.#maxTimestampMs = timestampMs;
    this.#pos = end;
    this.#count++;
  }

  /**
   * Switches the batch being built to the extended layout: sets attribute bit 3 and rewrites the
   * records already in it (v1 ones, so no key is empty and no value null) to say the same thing.
   */
  #extend(): void {
    this.#extended = true;
    const slab = this.#slab;
    writeU16(slab, this.#start + ATTRIBUTES_AT, EXTENDED_RECORDS | this.#partitionedBit());
    let p = this.#start + BATCH_RECORDS_AT;
    while (p < this.#pos) {
      const keyLen = readU32(slab, p + KEY_SIZE_AT);
      if (keyLen === 0) writeU32(slab, p + KEY_SIZE_AT, NULL_SIZE);
      writeU32(slab, p + COUNT_AT, 0);
      p += HEADER_SIZE + keyLen + readU32(slab, p + PAYLOAD_SIZE_AT);
    }
  }

  /**
   * Completes the batch (header, metadata, CRC) and returns it; the builder then starts a new one.
   * The returned buffer belongs to the caller; the builder never writes to it again.
   * Throws if no record was added.
   */
  finish(): Buffer {
    if (this.#count === 0) throw new RangeError("cannot finish an empty batch");
    const slab = this.#slab;
    const s = this.#start;
    if (this.#producerId !== NO_PRODUCER_ID) {
      writeProducerFields(slab, s, this.#producerId, this.#producerEpoch, this.#baseSequence);
      this.#producerId = NO_PRODUCER_ID;
    }
    writeTimestampMs(slab, s + TIMESTAMP_AT, this.#maxTimestampMs);
    writeU32(slab, s + KEY_SIZE_AT, BATCH_META_SIZE);
    writeU32(slab, s + PAYLOAD_SIZE_AT, this.#pos - s - BATCH_RECORDS_AT);
    writeU32(slab, s + COUNT_AT, this.#count);
    writeU32(slab, s + CRC_AT, batchCrc(slab, s, this.#pos));
    const batch = slab.subarray(s, this.#pos);
    this.#start = this.#pos;
    if (this.#pool !== null) {
      // The next batch takes a buffer when its first record comes.
      this.#pool.noteSize(batch.length);
      this.#handedOut = true;
      this.#count = 0;
      this.#start = 0;
      this.#pos = BATCH_RECORDS_AT;
      return batch;
    }
    this.#begin();
    return batch;
  }

  /**
   * Marks the batch being built (the next `finish`) as an idempotent producer's: its producer id,
   * epoch and the sequence number of its first record (docs/format.md). Later batches have none
   * unless this is called again.
   */
  setProducer(producerId: number, epoch: number, baseSequence: number): void {
    if (this.#partitioned) throw new TypeError("a partitioned batch has no producer fields");
    this.#producerId = producerId;
    this.#producerEpoch = epoch;
    this.#baseSequence = baseSequence;
  }

  /** Drops the records of the batch being built. */
  clear(): void {
    this.#producerId = NO_PRODUCER_ID;
    if (this.#handedOut) return;
    this.#pos = this.#start;
    this.#begin();
  }

  #partitionedBit(): number {
    return this.#partitioned ? PARTITIONED_RECORDS : 0;
  }

  /** Starts a batch at #start: header and metadata with everything but the sizes and CRC. */
  #begin(): void {
    if (this.#handedOut) {
      this.#slab = this.#pool!.acquire();
      this.#start = 0;
      this.#handedOut = false;
    }
    this.#count = 0;
    this.#extended = false;
    this.#maxTimestampMs = -1;
    this.#pos = this.#start;
    this.#ensure(BATCH_RECORDS_AT);
    const slab = this.#slab;
    const s = this.#start;
    slab[s] = MAGIC;
    // A loop, not Buffer#fill: its argument checks cost more than the 28 stores (every batch of a
    // send over many partitions begins here).
    for (let i = s + 1; i < s + HEADER_SIZE; i++) slab[i] = 0;
    writeU32(slab, s + CRC_AT, 0);
    writeU16(slab, s + CRC_AT + 4, this.#partitionedBit()); // attributes: no compression
    writeProducerFields(slab, s, NO_PRODUCER_ID, 0, 0);
    this.#pos = s + BATCH_RECORDS_AT;
  }

  /** Makes room for `n` more bytes, moving the batch in progress to a new slab if needed. */
  #ensure(n: number): void {
    if (this.#pos + n <= this.#slab.length) return;
    const used = this.#pos - this.#start;
    const pool = this.#pool;
    const next =
      pool === null ? Buffer.allocUnsafe(Math.max(this.#slabBytes, 2 * (used + n))) : pool.acquire(used + n);
    this.#slab.copy(next, 0, this.#start, this.#pos);
    // Never handed out (the batch in it is still being built), so it can go straight back.
    pool?.release(this.#slab);
    this.#slab = next;
    this.#start = 0;
    this.#pos = used;
  }
}

/** Strings up to this many UTF-16 units take the copy loop in `writeString`. */
const SHORT_STRING = 32;

/**
 * Writes `s` as UTF-8 at `at` and returns the bytes written. Short ASCII strings (typical keys) are
 * copied by a loop: Buffer#write's argument handling costs more than the copy itself. Anything
 * else goes to Buffer#write, which also overwrites what the loop had copied.
 */
function writeString(target: Buffer, s: string, at: number): number {
  const n = s.length;
  if (n > SHORT_STRING) return target.write(s, at);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return target.write(s, at);
    target[at + i] = c;
  }
  return n;
}

function copyInto(target: Buffer, source: Uint8Array, at: number): number {
  target.set(source, at);
  return source.length;
}

/**
 * Byte layout of format version 1 and its extended records (docs/format.md). Every record, a batch or an inner record,
 * starts with the same fixed 29-byte big-endian header.
 */

/** The magic byte: names the format version. Any other value is rejected. */
export const MAGIC = 0xc1;

export const HEADER_SIZE = 29;

// Header field positions, relative to the record's first byte.
export const MAGIC_AT = 0;
export const TIMESTAMP_AT = 1; // u64, nanoseconds since the Unix epoch
export const OFFSET_AT = 9; // u64: base offset (batch) or offset delta (inner record)
export const KEY_SIZE_AT = 17; // u32
export const PAYLOAD_SIZE_AT = 21; // u32
export const COUNT_AT = 25; // u32: N >= 1 for a batch; 1 for a v1 inner record, its headers size for an extended one

/** A batch's key is its metadata block; version 1 metadata is exactly this long. */
export const BATCH_META_SIZE = 20;
// Metadata field positions, relative to the batch's first byte.
export const CRC_AT = HEADER_SIZE; // u32 CRC32C
export const ATTRIBUTES_AT = CRC_AT + 4; // u16
export const PRODUCER_EPOCH_AT = ATTRIBUTES_AT + 2; // u16: 0..32767 with a producer id, else 0
export const PRODUCER_ID_AT = PRODUCER_EPOCH_AT + 2; // u64, all ones = none
export const BASE_SEQUENCE_AT = PRODUCER_ID_AT + 8; // u32
/** Where a batch's first inner record starts. */
export const BATCH_RECORDS_AT = HEADER_SIZE + BATCH_META_SIZE;
/**
 * The largest batch any broker accepts (its maxBatchBytes setting is at most this): what a reader
 * that does not know the broker's setting bounds a decompression by.
 */
export const LARGEST_BATCH_BYTES = 1024 * 1024 * 1024;
/** The smallest possible batch: header, metadata and one empty inner record. */
export const MIN_BATCH_SIZE = BATCH_RECORDS_AT + HEADER_SIZE;

/** Attribute bits 0-2: the compression codec of the inner records. Only 0 (none) exists so far. */
export const COMPRESSION_MASK = 0x0007;
export const COMPRESSION_NONE = 0;

/**
 * Attribute bit 3: every inner record of the batch has the extended layout (docs/format.md): key
 * and payload sizes of all ones mean null, and the count field is the size of a headers block that
 * follows the value. A reader that predates it refuses the batch (reserved bits must be 0).
 */
export const EXTENDED_RECORDS = 0x0008;
/**
 * Attribute bit 4: the payload is one Kafka RecordBatch v2, stored as it came (format/kafka/
 * kafka-envelope.ts). Set alone: the Kafka batch names its own codec, and the reserved u16 holds its
 * producer epoch. checkBatch applies the Kafka rules to such a batch; readers that walk inner records
 * convert it first (format/kafka/stored-kafka.ts).
 */
export const KAFKA_RECORD_BATCH_PAYLOAD = 0x0010;
/**
 * Attribute bit 5: a *partitioned* batch (docs/format.md): each inner record's offset field holds
 * the partition it is for instead of its offset delta. Only Produce version 3 carries one; the
 * broker splits it into ordinary batches (format/partitioned-batch.ts) and never stores it, so
 * checkBatch refuses it like any reserved bit.
 */
export const PARTITIONED_RECORDS = 0x0020;
/** The attribute bits a partitioned batch may have: itself and the extended layout, no codec. */
export const PARTITIONED_ATTRIBUTES = PARTITIONED_RECORDS | EXTENDED_RECORDS;
/** The attribute bits of a batch of Conch inner records: the codec and the extended layout. */
export const KNOWN_ATTRIBUTES = COMPRESSION_MASK | EXTENDED_RECORDS;

/** An extended record's key, payload or header value size meaning null (no bytes follow). */
export const NULL_SIZE = 0xffffffff;

/** u32 value meaning "no producer id" in both halves of the producer id field. */
export const NO_PRODUCER_ID_HALF = 0xffffffff;
/** The largest producer epoch (Kafka's is a non-negative int16). */
export const MAX_PRODUCER_EPOCH = 0x7fff;
/** The largest sequence number; the one after it is 0 (Kafka's int32 sequences wrap the same way). */
export const MAX_SEQUENCE = 0x7fffffff;

/** The largest offset representable as a JavaScript number. */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

/**
 * The largest timestamp, in milliseconds, that the API accepts (2^42 - 1, in the year 2109): below it
 * the ms <-> ns conversions in timestamp.ts are exact without BigInt.
 */
export const MAX_TIMESTAMP_MS = 2 ** 42 - 1;

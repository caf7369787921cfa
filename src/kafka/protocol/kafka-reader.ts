/**
 * Reads the Kafka protocol's primitive types in place from a frame (docs/kafka.md, "Primitives").
 * Every read is bounds checked against the end it was given, and every length or count is checked
 * against the bytes left before anything is sized from it, so a hostile frame makes a decoder throw
 * one typed ConchError (MALFORMED_REQUEST unless told otherwise) and never a RangeError, never reads
 * past its end and never allocates from a forged count.
 *
 * Integers come back as JavaScript numbers: int64 and varlong fields must be exact (within
 * +-(2^53 - 1)); a value outside is refused as malformed rather than rounded. Offsets, timestamps
 * and producer ids all fit in practice, and Conch's own offsets stop at 2^53 - 1 (docs/format.md).
 *
 * One reader can be pointed at many ranges in turn (`reset`), so a cursor walking records keeps one.
 */
import { ConchError, ErrorCode } from "../../format/errors.js";

const TWO_32 = 0x1_0000_0000;
/** The high half of an exact int64 lies in [-2^21, 2^21). */
const MAX_SAFE_HIGH = 0x1fffff;

export class KafkaReader {
  #buf: Buffer;
  #pos: number;
  #end: number;
  readonly #code: number;
  readonly #what: string;

  /** Reads buf[start, end). `code` and `what` name the error thrown on malformed input. */
  constructor(
    buf: Buffer,
    start = 0,
    end: number = buf.length,
    code: number = ErrorCode.MALFORMED_REQUEST,
    what = "kafka request",
  ) {
    this.#buf = buf;
    this.#pos = start;
    this.#end = Math.min(end, buf.length);
    this.#code = code;
    this.#what = what;
  }

  /** Points the reader at buf[start, end). */
  reset(buf: Buffer, start: number, end: number): this {
    this.#buf = buf;
    this.#pos = start;
    this.#end = Math.min(end, buf.length);
    return this;
  }

  get buffer(): Buffer {
    return this.#buf;
  }

  get position(): number {
    return this.#pos;
  }

  get remaining(): number {
    return this.#end - this.#pos;
  }

  int8(): number {
    this.#need(1, "int8");
    return (this.#buf[this.#pos++]! << 24) >> 24;
  }

  boolean(): boolean {
    this.#need(1, "boolean");
    return this.#buf[this.#pos++] !== 0;
  }

  int16(): number {
    this.#need(2, "int16");
    const b = this.#buf;
    const p = this.#pos;
    this.#pos = p + 2;
    return (((b[p]! << 8) | b[p + 1]!) << 16) >> 16;
  }

  int32(): number {
    this.#need(4, "int32");
    const b = this.#buf;
    const p = this.#pos;
    this.#pos = p + 4;
    return (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
  }

  uint32(): number {
    return this.int32() >>> 0;
  }

  /** A signed int64 as an exact number; one outside +-(2^53 - 1) is malformed. */
  int64(): number {
    this.#need(8, "int64");
    const b = this.#buf;
    const p = this.#pos;
    const hi = (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
    if (hi > MAX_SAFE_HIGH || hi < -MAX_SAFE_HIGH - 1) throw this.malformed("int64 beyond 2^53");
    const lo = ((b[p + 4]! << 24) | (b[p + 5]! << 16) | (b[p + 6]! << 8) | b[p + 7]!) >>> 0;
    this.#pos = p + 8;
    const v = hi * TWO_32 + lo;
    // -2^53 itself passes the high-half test but is not exact.
    if (!Number.isSafeInteger(v)) throw this.malformed("int64 beyond 2^53");
    return v;
  }

  /** An unsigned varint of at most 5 bytes holding a uint32. */
  uvarint(): number {
    const b = this.#buf;
    let p = this.#pos;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (p >= this.#end) throw this.malformed("varint past the end");
      const byte = b[p++]!;
      v += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        if (v > 0xffffffff) break;
        this.#pos = p;
        return v;
      }
    }
    throw this.malformed("varint longer than 32 bits");
  }

  /** A zigzag varint holding an int32. */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /**
   * A zigzag varlong as an exact number. The zigzag form itself must be exact (at most 2^53 - 1),
   * so values beyond +-2^52 are refused as malformed: no timestamp or offset delta comes near.
   */
  varlong(): number {
    const b = this.#buf;
    let p = this.#pos;
    let u = 0;
    for (let shift = 0; shift < 56; shift += 7) {
      if (p >= this.#end) throw this.malformed("varlong past the end");
      const byte = b[p++]!;
      u += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        if (u > Number.MAX_SAFE_INTEGER) break;
        this.#pos = p;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
    }
    throw this.malformed("varlong beyond 2^52");
  }

  /** STRING: int16 length, UTF-8; null is malformed here. */
  string(): string {
    const s = this.nullableString();
    if (s === null) throw this.malformed("null where a string is required");
    return s;
  }

  /** NULLABLE_STRING: int16 length, -1 = null. */
  nullableString(): string | null {
    const len = this.int16();
    if (len === -1) return null;
    return this.#text(len);
  }

  /** COMPACT_STRING: uvarint length + 1; 0 (null) is malformed here. */
  compactString(): string {
    const s = this.compactNullableString();
    if (s === null) throw this.malformed("null where a compact string is required");
    return s;
  }

  /** COMPACT_NULLABLE_STRING: uvarint length + 1, 0 = null. */
  compactNullableString(): string | null {
    const n = this.uvarint();
    if (n === 0) return null;
    return this.#text(n - 1);
  }

  /** BYTES: int32 length, as a view of the frame (no copy); null is malformed here. */
  bytes(): Buffer {
    const b = this.nullableBytes();
    if (b === null) throw this.malformed("null where bytes are required");
    return b;
  }

  /** NULLABLE_BYTES: int32 length, -1 = null, as a view of the frame. */
  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len === -1) return null;
    return this.#view(len);
  }

  /** COMPACT_BYTES: uvarint length + 1, as a view of the frame. */
  compactBytes(): Buffer {
    const n = this.uvarint();
    if (n === 0) throw this.malformed("null where compact bytes are required");
    return this.#view(n - 1);
  }

  /**
   * ARRAY's int32 element count, refused when even `minElementBytes` per element could not fit in
   * the bytes left: a forged count never sizes an allocation. Null (-1) is malformed here.
   */
  arrayCount(minElementBytes: number): number {
    const n = this.nullableArrayCount(minElementBytes);
    if (n === -1) throw this.malformed("null where an array is required");
    return n;
  }

  /** Like arrayCount, but -1 (a null array) is returned as -1. */
  nullableArrayCount(minElementBytes: number): number {
    const n = this.int32();
    if (n === -1) return -1;
    return this.#bounded(n, minElementBytes);
  }

  /** COMPACT_ARRAY's count (uvarint count + 1); null (0) is malformed here. */
  compactArrayCount(minElementBytes: number): number {
    const n = this.uvarint();
    if (n === 0) throw this.malformed("null where a compact array is required");
    return this.#bounded(n - 1, minElementBytes);
  }

  /**
   * Skips a tagged-field section (flexible versions): a uvarint count, then per field a uvarint tag
   * and a uvarint size, tags strictly ascending. None of the versions decoded here defines a tag we
   * read, so every field is skipped, each size checked against the bytes left.
   */
  skipTaggedFields(): void {
    const count = this.uvarint();
    if (count * 2 > this.remaining) throw this.malformed(`tagged field count ${count} exceeds the frame`);
    let last = -1;
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      if (tag <= last) throw this.malformed("tagged fields out of order");
      last = tag;
      const size = this.uvarint();
      this.#need(size, "tagged field");
      this.#pos += size;
    }
  }

  /** Skips n bytes, checked. */
  skip(n: number): void {
    this.#need(n, "skip");
    this.#pos += n;
  }

  /** Asserts the message was consumed exactly: trailing bytes are as malformed as missing ones. */
  done(): void {
    if (this.#pos !== this.#end) throw this.malformed(`${this.#end - this.#pos} unexpected trailing bytes`);
  }

  /** The error this reader throws, for checks its callers make on values it read. */
  malformed(why: string): ConchError {
    return new ConchError(this.#code, `malformed ${this.#what}: ${why} at byte ${this.#pos}`);
  }

  #text(len: number): string {
    if (len < 0) throw this.malformed(`string length ${len}`);
    this.#need(len, "string");
    const start = this.#pos;
    this.#pos += len;
    return this.#buf.toString("utf8", start, start + len);
  }

  #view(len: number): Buffer {
    if (len < 0) throw this.malformed(`bytes length ${len}`);
    this.#need(len, "bytes");
    const start = this.#pos;
    this.#pos += len;
    return this.#buf.subarray(start, start + len);
  }

  #bounded(n: number, minElementBytes: number): number {
    if (n < 0) throw this.malformed(`array count ${n}`);
    if (n * minElementBytes > this.remaining) throw this.malformed(`array count ${n} exceeds the frame`);
    return n;
  }

  #need(n: number, field: string): void {
    if (this.#end - this.#pos < n) throw this.malformed(`${field} of ${n} bytes past the end`);
  }
}

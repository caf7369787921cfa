/**
 * Writes the Kafka protocol's primitive types. An encoder is written once, against `KafkaSink`, and
 * run twice: over a `KafkaSizer`, which only adds up sizes, then over a `KafkaWriter` allocated once
 * at exactly that size (hypercore's preencode/encode, without writing the layout down twice). No
 * buffer per nested structure, no copy into a parent.
 *
 * A writer may also hand a large response out in pieces (`KafkaWriter.referencing`): the sizer
 * counts what `bytesOf` is given apart (`referenced`), the writer's own buffer holds everything
 * else, and `finish` returns that buffer's stretches with `bytesOf`'s buffers between them, not
 * copied (a fetch's stored batches, written with the headers around them as one writev).
 *
 * Values that do not fit their field are refused (INVALID_REQUEST: an encoder was handed bad values)
 * rather than silently wrapped.
 */
import { ConchError, ErrorCode } from "../../format/errors.js";
import { uvarintSize, writeUVarintAt, zigzag } from "./varint.js";

const TWO_32 = 0x1_0000_0000;

/** The operations every encoder uses; implemented by the sizer and the writer alike. */
export interface KafkaSink {
  int8(v: number): void;
  boolean(v: boolean): void;
  int16(v: number): void;
  int32(v: number): void;
  uint32(v: number): void;
  int64(v: number): void;
  uvarint(v: number): void;
  varint(v: number): void;
  varlong(v: number): void;
  string(s: string): void;
  nullableString(s: string | null): void;
  compactString(s: string): void;
  compactNullableString(s: string | null): void;
  bytes(b: Uint8Array): void;
  nullableBytes(b: Uint8Array | null): void;
  /** BYTES whose value is `parts` one after another: no joined copy made first. */
  bytesOf(parts: readonly Uint8Array[]): void;
  compactBytes(b: Uint8Array): void;
  /** ARRAY's int32 count, or -1 for a null array. */
  arrayCount(n: number): void;
  /** COMPACT_ARRAY's count (written as n + 1; -1 for null). */
  compactArrayCount(n: number): void;
  /** An empty tagged-field section: Conch writes no tagged fields. */
  emptyTaggedFields(): void;
}

function checkInt(v: number, min: number, max: number, type: string): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `${v} does not fit in a kafka ${type}`);
  }
}

function checkStringBytes(len: number): void {
  if (len > 0x7fff) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `string of ${len} bytes is longer than 32767`);
  }
}

/** Adds up the size of what an encoder writes; writes nothing. */
export class KafkaSizer implements KafkaSink {
  size = 0;
  /** Of `size`, the bytes `bytesOf` was given (a referencing writer does not copy them). */
  referenced = 0;

  reset(): this {
    this.size = 0;
    this.referenced = 0;
    return this;
  }

  int8(): void {
    this.size += 1;
  }
  boolean(): void {
    this.size += 1;
  }
  int16(): void {
    this.size += 2;
  }
  int32(): void {
    this.size += 4;
  }
  uint32(): void {
    this.size += 4;
  }
  int64(): void {
    this.size += 8;
  }
  uvarint(v: number): void {
    this.size += uvarintSize(v);
  }
  varint(v: number): void {
    this.size += uvarintSize(zigzag(v));
  }
  varlong(v: number): void {
    this.size += uvarintSize(zigzag(v));
  }
  string(s: string): void {
    const len = Buffer.byteLength(s, "utf8");
    checkStringBytes(len);
    this.size += 2 + len;
  }
  nullableString(s: string | null): void {
    if (s === null) this.size += 2;
    else this.string(s);
  }
  compactString(s: string): void {
    const len = Buffer.byteLength(s, "utf8");
    checkStringBytes(len);
    this.size += uvarintSize(len + 1) + len;
  }
  compactNullableString(s: string | null): void {
    if (s === null) this.size += 1;
    else this.compactString(s);
  }
  bytes(b: Uint8Array): void {
    this.size += 4 + b.length;
  }
  nullableBytes(b: Uint8Array | null): void {
    this.size += 4 + (b === null ? 0 : b.length);
  }
  bytesOf(parts: readonly Uint8Array[]): void {
    let length = 0;
    for (const p of parts) length += p.length;
    this.size += 4 + length;
    this.referenced += length;
  }
  compactBytes(b: Uint8Array): void {
    this.size += uvarintSize(b.length + 1) + b.length;
  }
  arrayCount(): void {
    this.size += 4;
  }
  compactArrayCount(n: number): void {
    this.size += uvarintSize(n + 1);
  }
  emptyTaggedFields(): void {
    this.size += 1;
  }
}

/** Writes into a buffer allocated once at the size a `KafkaSizer` found. */
export class KafkaWriter implements KafkaSink {
  readonly buf: Buffer;
  #pos = 0;
  /** Set by `referencing`: the pieces so far, and where the stretch of `buf` not yet in them starts. */
  #pieces: Buffer[] | null = null;
  #cut = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /**
   * A writer whose `bytesOf` keeps its buffers by reference: `size` is the sizer's size less its
   * `referenced` bytes, and `finishPieces` returns what was written, in order.
   */
  static referencing(size: number): KafkaWriter {
    const w = new KafkaWriter(size);
    w.#pieces = [];
    return w;
  }

  get position(): number {
    return this.#pos;
  }

  int8(v: number): void {
    checkInt(v, -0x80, 0x7f, "int8");
    this.buf[this.#pos++] = v & 0xff;
  }
  boolean(v: boolean): void {
    this.buf[this.#pos++] = v ? 1 : 0;
  }
  int16(v: number): void {
    checkInt(v, -0x8000, 0x7fff, "int16");
    this.buf.writeInt16BE(v, this.#pos);
    this.#pos += 2;
  }
  int32(v: number): void {
    checkInt(v, -0x8000_0000, 0x7fff_ffff, "int32");
    this.buf.writeInt32BE(v, this.#pos);
    this.#pos += 4;
  }
  uint32(v: number): void {
    checkInt(v, 0, 0xffff_ffff, "uint32");
    this.buf.writeUInt32BE(v, this.#pos);
    this.#pos += 4;
  }
  int64(v: number): void {
    checkInt(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, "int64 (exact)");
    const hi = Math.floor(v / TWO_32);
    this.buf.writeInt32BE(hi, this.#pos);
    this.buf.writeUInt32BE(v - hi * TWO_32, this.#pos + 4);
    this.#pos += 8;
  }
  uvarint(v: number): void {
    checkInt(v, 0, Number.MAX_SAFE_INTEGER, "uvarint");
    this.#pos = writeUVarintAt(this.buf, this.#pos, v);
  }
  varint(v: number): void {
    checkInt(v, -0x8000_0000, 0x7fff_ffff, "varint");
    this.uvarint(zigzag(v));
  }
  varlong(v: number): void {
    checkInt(v, -(2 ** 52), 2 ** 52 - 1, "varlong (exact)");
    this.uvarint(zigzag(v));
  }
  /** The length is known only once written, so the bytes go first and the length after. */
  string(s: string): void {
    const len = this.buf.write(s, this.#pos + 2, "utf8");
    this.buf.writeInt16BE(len, this.#pos);
    this.#pos += 2 + len;
  }
  nullableString(s: string | null): void {
    if (s !== null) {
      this.string(s);
      return;
    }
    this.buf.writeInt16BE(-1, this.#pos);
    this.#pos += 2;
  }
  compactString(s: string): void {
    this.uvarint(Buffer.byteLength(s, "utf8") + 1);
    this.#pos += this.buf.write(s, this.#pos, "utf8");
  }
  compactNullableString(s: string | null): void {
    if (s === null) this.uvarint(0);
    else this.compactString(s);
  }
  bytes(b: Uint8Array): void {
    this.int32(b.length);
    this.buf.set(b, this.#pos);
    this.#pos += b.length;
  }
  nullableBytes(b: Uint8Array | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }
  bytesOf(parts: readonly Uint8Array[]): void {
    let length = 0;
    for (const p of parts) length += p.length;
    this.int32(length);
    const pieces = this.#pieces;
    if (pieces !== null) {
      if (this.#pos > this.#cut) pieces.push(this.buf.subarray(this.#cut, this.#pos));
      this.#cut = this.#pos;
      for (const p of parts) if (p.length > 0) pieces.push(asBuffer(p));
      return;
    }
    for (const p of parts) {
      this.buf.set(p, this.#pos);
      this.#pos += p.length;
    }
  }
  compactBytes(b: Uint8Array): void {
    this.uvarint(b.length + 1);
    this.buf.set(b, this.#pos);
    this.#pos += b.length;
  }
  arrayCount(n: number): void {
    this.int32(n);
  }
  compactArrayCount(n: number): void {
    this.uvarint(n + 1);
  }
  emptyTaggedFields(): void {
    this.buf[this.#pos++] = 0;
  }

  /** The finished buffer. A size that disagrees with what was written is a bug in an encoder. */
  finish(): Buffer {
    if (this.#pos !== this.buf.length) {
      throw new Error(`kafka encoder wrote ${this.#pos} bytes into a buffer sized ${this.buf.length}`);
    }
    return this.buf;
  }

  /** A referencing writer's pieces, in order: stretches of `buf` and the buffers `bytesOf` kept. */
  finishPieces(): Buffer[] {
    const pieces = this.#pieces;
    if (pieces === null) throw new Error("finishPieces on a writer that does not reference");
    this.finish();
    if (this.#pos > this.#cut) pieces.push(this.buf.subarray(this.#cut, this.#pos));
    this.#cut = this.#pos;
    return pieces;
  }
}

/** `b` as a Buffer over the same memory (a view, not a copy). */
function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length);
}

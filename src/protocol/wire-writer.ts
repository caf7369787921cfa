/**
 * Writes the protocol's primitives into a buffer allocated once at the message's exact size.
 * Encoders size a message first (with the `*Size` helpers below), then write it in one pass: no
 * buffer per nested structure, no copy into a parent (hypercore's preencode/encode).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { writeU16, writeU32, writeU64 } from "../format/u64.js";

const MAX_STRING_BYTES = 0xffff;
const MAX_U32 = 0xffffffff;

/** Wire size of a `string`: u16 length + UTF-8 bytes. Throws when it cannot be encoded. */
export function stringSize(s: string): number {
  const len = Buffer.byteLength(s, "utf8");
  if (len > MAX_STRING_BYTES) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `string of ${len} bytes is longer than 65535`);
  }
  return 2 + len;
}

/** Wire size of a `bytes` field holding `length` bytes. */
export function bytesSize(length: number): number {
  return 4 + length;
}

export class WireWriter {
  readonly buf: Buffer;
  #pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  get position(): number {
    return this.#pos;
  }

  u8(v: number): this {
    if ((v & 0xff) !== v) throw outOfRange(v, "u8");
    this.buf[this.#pos++] = v;
    return this;
  }

  u16(v: number): this {
    if ((v & 0xffff) !== v) throw outOfRange(v, "u16");
    writeU16(this.buf, this.#pos, v);
    this.#pos += 2;
    return this;
  }

  u32(v: number): this {
    if (v >>> 0 !== v) throw outOfRange(v, "u32");
    writeU32(this.buf, this.#pos, v);
    this.#pos += 4;
    return this;
  }

  /** A non-negative integer below 2^53 as u64. */
  u64(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw outOfRange(v, "u64 below 2^53");
    writeU64(this.buf, this.#pos, v);
    this.#pos += 8;
    return this;
  }

  /** Like u64, but -1 ("none") is written as all ones. */
  i64(v: number): this {
    if (v !== -1) return this.u64(v);
    writeU32(this.buf, this.#pos, MAX_U32);
    writeU32(this.buf, this.#pos + 4, MAX_U32);
    this.#pos += 8;
    return this;
  }

  /** The string's length is known only once written, so the bytes go first and the length after. */
  string(s: string): this {
    const len = this.buf.write(s, this.#pos + 2, "utf8");
    writeU16(this.buf, this.#pos, len);
    this.#pos += 2 + len;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.u32(b.length);
    this.buf.set(b, this.#pos);
    this.#pos += b.length;
    return this;
  }

  /** An array's element count; the elements follow. */
  count(n: number): this {
    return this.u32(n);
  }

  /** The finished buffer. A size that disagrees with what was written is a bug in an encoder. */
  finish(): Buffer {
    if (this.#pos !== this.buf.length) {
      throw new Error(`encoder wrote ${this.#pos} bytes into a buffer sized ${this.buf.length}`);
    }
    return this.buf;
  }
}

/** Encoding a value that does not fit its field is refused rather than silently wrapped. */
function outOfRange(v: number, type: string): ConchError {
  return new ConchError(ErrorCode.INVALID_REQUEST, `${v} does not fit in a ${type}`);
}

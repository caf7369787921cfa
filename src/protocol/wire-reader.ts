/**
 * Reads the protocol's primitives (docs/protocol.md) in place from a frame. Every read is bounds
 * checked against the frame's end, and every length or count is checked against the bytes left
 * before anything is sized from it, so a hostile frame can make a decoder throw
 * ConchError(MALFORMED_REQUEST) but never read past its end or allocate from a forged count.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { readU16, readU32, readU64Safe } from "../format/u64.js";

export class WireReader {
  #buf: Buffer;
  #pos: number;
  #end: number;
  /** "request" or "response": names the message in error messages. */
  #what: string;

  /** Reads buf[start, end). */
  constructor(buf: Buffer, start: number, end: number = buf.length, what = "request") {
    this.#buf = buf;
    this.#pos = start;
    this.#end = end;
    this.#what = what;
  }

  get position(): number {
    return this.#pos;
  }

  get remaining(): number {
    return this.#end - this.#pos;
  }

  u8(): number {
    this.#need(1, "u8");
    return this.#buf[this.#pos++]!;
  }

  u16(): number {
    this.#need(2, "u16");
    const v = readU16(this.#buf, this.#pos);
    this.#pos += 2;
    return v;
  }

  u32(): number {
    this.#need(4, "u32");
    const v = readU32(this.#buf, this.#pos);
    this.#pos += 4;
    return v;
  }

  /** A u64 as a number; a value past 2^53 - 1 is malformed. */
  u64(): number {
    this.#need(8, "u64");
    const v = readU64Safe(this.#buf, this.#pos);
    if (v < 0) throw this.#malformed("u64 past 2^53 - 1");
    this.#pos += 8;
    return v;
  }

  /** Like u64, but all ones reads as -1 ("none"). */
  i64(): number {
    this.#need(8, "i64");
    const b = this.#buf;
    const p = this.#pos;
    if (readU32(b, p) === 0xffffffff && readU32(b, p + 4) === 0xffffffff) {
      this.#pos += 8;
      return -1;
    }
    return this.u64();
  }

  /** A u16-length-prefixed UTF-8 string. */
  string(): string {
    const len = this.u16();
    this.#need(len, "string");
    const start = this.#pos;
    this.#pos += len;
    return this.#buf.toString("utf8", start, start + len);
  }

  /** A u32-length-prefixed byte string, as a view of the frame (no copy). */
  bytes(): Buffer {
    const len = this.u32();
    this.#need(len, "bytes");
    const start = this.#pos;
    this.#pos += len;
    return this.#buf.subarray(start, start + len);
  }

  /**
   * An array's u32 element count, refused when even `minElementBytes` per element could not fit in
   * the bytes left: a forged count never sizes an allocation.
   */
  count(minElementBytes: number): number {
    const n = this.u32();
    if (n * minElementBytes > this.remaining) throw this.#malformed(`array count ${n} exceeds the frame`);
    return n;
  }

  /** Asserts the message was consumed exactly: trailing bytes are as malformed as missing ones. */
  done(): void {
    if (this.#pos !== this.#end) throw this.#malformed(`${this.#end - this.#pos} unexpected trailing bytes`);
  }

  #need(n: number, field: string): void {
    if (this.#end - this.#pos < n) throw this.#malformed(`${field} of ${n} bytes past the end`);
  }

  #malformed(why: string): ConchError {
    return new ConchError(
      ErrorCode.MALFORMED_REQUEST,
      `malformed ${this.#what}: ${why} at byte ${this.#pos}`,
    );
  }
}

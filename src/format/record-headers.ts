/**
 * The headers block of an extended inner record (docs/format.md): a u32 header count (at least
 * 1), then for each header a u32 key size, the key, a u32 value size (all ones = null) and the
 * value. Sizing and writing for BatchBuilder and the producer, the check checkBatch runs, and an
 * in-place walker for readers; only `readHeaders` makes objects, for the SDK's message.
 */
import { ConchError, ErrorCode } from "./errors.js";
import { NULL_SIZE } from "./layout.js";
import { readU32, writeU32 } from "./u64.js";

export type HeaderValue = Uint8Array | string | null;

/**
 * Headers as a caller gives them: an object (its own keys, in their order) or a list of
 * `[key, value]` pairs, which keeps any order and repeated keys. Strings are written as UTF-8.
 */
export type RecordHeaders =
  | Readonly<Record<string, HeaderValue>>
  | ReadonlyArray<readonly [Uint8Array | string, HeaderValue]>;

/** One header as the SDK hands it out. */
export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** Bytes of the header count, and of each size field in the block. */
const SIZE_FIELD = 4;

/**
 * The headers block's size for `headers`: 0 when there are none (no block is written), -1 when
 * they are not headers (a key that is not a string or bytes, a value not a string, bytes or null).
 */
export function headersBlockSize(headers: RecordHeaders): number {
  let size = SIZE_FIELD;
  let n = 0;
  if (Array.isArray(headers)) {
    for (const pair of headers as ReadonlyArray<unknown>) {
      if (!Array.isArray(pair)) return -1;
      const k = byteSize(pair[0]);
      const v = pair[1] === null ? 0 : byteSize(pair[1]);
      if (k < 0 || v < 0) return -1;
      size += 2 * SIZE_FIELD + k + v;
      n++;
    }
  } else if (typeof headers === "object" && headers !== null) {
    const record = headers as Readonly<Record<string, unknown>>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      const v = value === null ? 0 : byteSize(value);
      if (v < 0) return -1;
      size += 2 * SIZE_FIELD + Buffer.byteLength(key) + v;
      n++;
    }
  } else {
    return -1;
  }
  return n === 0 ? 0 : size;
}

/**
 * Writes the headers block of `headers` at `at` and returns its size, which must be what
 * `headersBlockSize` gave (> 0); `target` must have room for it.
 */
export function writeHeadersBlock(target: Buffer, at: number, headers: RecordHeaders): number {
  let p = at + SIZE_FIELD;
  let n = 0;
  if (Array.isArray(headers)) {
    for (const [key, value] of headers as ReadonlyArray<readonly [Uint8Array | string, HeaderValue]>) {
      p = writeHeader(target, p, key, value);
      n++;
    }
  } else {
    const record = headers as Readonly<Record<string, HeaderValue>>;
    for (const key of Object.keys(record)) {
      p = writeHeader(target, p, key, record[key] ?? null);
      n++;
    }
  }
  writeU32(target, at, n);
  return p - at;
}

function writeHeader(target: Buffer, at: number, key: Uint8Array | string, value: HeaderValue): number {
  let p = at + SIZE_FIELD;
  p += writeBytes(target, p, key);
  writeU32(target, at, p - at - SIZE_FIELD);
  if (value === null) {
    writeU32(target, p, NULL_SIZE);
    return p + SIZE_FIELD;
  }
  const v = p + SIZE_FIELD;
  const written = writeBytes(target, v, value);
  writeU32(target, p, written);
  return v + written;
}

function writeBytes(target: Buffer, at: number, b: Uint8Array | string): number {
  if (typeof b === "string") return target.write(b, at);
  target.set(b, at);
  return b.length;
}

/** UTF-8 bytes of a string, length of bytes, or -1 for anything else. */
function byteSize(v: unknown): number {
  if (typeof v === "string") return Buffer.byteLength(v);
  if (v instanceof Uint8Array) return v.length;
  return -1;
}

/**
 * Whether buf[start, end) is a well-formed headers block: a header count of at least 1, and that
 * many headers, each size inside the block, filling it exactly. Reads nothing outside the range.
 */
export function headersBlockValid(buf: Uint8Array, start: number, end: number): boolean {
  if (end - start < SIZE_FIELD) return false;
  const n = readU32(buf, start);
  if (n === 0) return false;
  let p = start + SIZE_FIELD;
  for (let i = 0; i < n; i++) {
    p = headerEnd(buf, p, end);
    if (p < 0) return false;
  }
  return p === end;
}

/**
 * Where the header at `p` ends, or -1 when it does not fit before `end`. A key size of all ones is
 * not null (header keys never are) but a size that cannot fit.
 */
function headerEnd(buf: Uint8Array, p: number, end: number): number {
  if (end - p < SIZE_FIELD) return -1;
  const keySize = readU32(buf, p);
  if (keySize > end - p - 2 * SIZE_FIELD) return -1;
  const v = p + SIZE_FIELD + keySize;
  const valueSize = readU32(buf, v);
  const valueEnd = v + SIZE_FIELD + (valueSize === NULL_SIZE ? 0 : valueSize);
  return valueEnd > end ? -1 : valueEnd;
}

/**
 * Walks the headers of one record in place: after `next()` returns true the fields describe the
 * current header, and `key()` / `value()` decode or view it when asked. Throws INVALID_BATCH on a
 * block that does not hold together; reads nothing outside it.
 */
export class HeaderCursor {
  #buf: Buffer = Buffer.alloc(0);
  #end = 0;
  #next = 0;
  #remaining = 0;
  keyStart = 0;
  keyEnd = 0;
  valueStart = 0;
  valueEnd = 0;
  valueNull = false;

  /** Points the cursor at the headers block buf[start, end); an empty range has no headers. */
  reset(buf: Buffer, start: number, end: number): this {
    this.#buf = buf;
    this.#end = end;
    this.#remaining = 0;
    this.#next = end;
    if (start === end) return this;
    if (end - start < SIZE_FIELD || readU32(buf, start) === 0) throw malformedHeaders(start);
    this.#remaining = readU32(buf, start);
    this.#next = start + SIZE_FIELD;
    return this;
  }

  /** The number of headers in the block. */
  get count(): number {
    return this.#remaining;
  }

  next(): boolean {
    const p = this.#next;
    if (this.#remaining === 0) {
      if (p !== this.#end) throw malformedHeaders(p);
      return false;
    }
    const end = headerEnd(this.#buf, p, this.#end);
    if (end < 0) throw malformedHeaders(p);
    this.keyStart = p + SIZE_FIELD;
    this.keyEnd = this.keyStart + readU32(this.#buf, p);
    this.valueStart = this.keyEnd + SIZE_FIELD;
    this.valueEnd = end;
    this.valueNull = readU32(this.#buf, this.keyEnd) === NULL_SIZE;
    this.#remaining--;
    this.#next = end;
    return true;
  }

  /** The current header's key, decoded as UTF-8. */
  key(): string {
    return this.#buf.toString("utf8", this.keyStart, this.keyEnd);
  }

  /** A view of the current header's value, or null. */
  value(): Buffer | null {
    return this.valueNull ? null : this.#buf.subarray(this.valueStart, this.valueEnd);
  }
}

/**
 * The headers in buf[start, end) as objects, in stored order with repeated keys kept; values are
 * views of `buf`. An empty range gives an empty array.
 */
export function readHeaders(
  buf: Buffer,
  start: number,
  end: number,
  into = new HeaderCursor(),
): RecordHeader[] {
  const c = into.reset(buf, start, end);
  const out: RecordHeader[] = [];
  while (c.next()) out.push({ key: c.key(), value: c.value() });
  return out;
}

function malformedHeaders(at: number): ConchError {
  return new ConchError(ErrorCode.INVALID_BATCH, `malformed record headers at byte ${at}`);
}

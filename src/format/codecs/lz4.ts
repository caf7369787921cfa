/**
 * lz4 (codec 3) in the LZ4 *frame* format, which Kafka's RecordBatch v2 uses (librdkafka, the
 * Java client and kafkajs all write frames). Compression is the `lz4-napi` package's (lz4_flex
 * behind napi-rs, a prebuilt binary per platform inside the registry packages). Decompression
 * walks the frame here and decodes blocks with lz4-block.ts, so the output bound is enforced as it
 * is written: a frame may omit its content size, and a declared one is only a claim.
 *
 * Frame: magic 0x184D2204 (LE), FLG, BD, optional content size (u64 LE), optional dictionary id
 * (refused: no Kafka client uses one), header checksum; blocks of a u32 LE size (high bit set =
 * stored uncompressed; 0 ends the frame) and optional block checksums; an optional content
 * checksum. Skippable frames are skipped, and frames may follow one another. The xxHash checksums
 * are not recomputed: the batch's own CRC (Conch's, or Kafka's CRC32C) covers these bytes.
 */
import { corruptInput, outputTooLarge } from "./codec-errors.js";
import { decodeLz4Block, LZ4_CORRUPT } from "./lz4-block.js";
import { NativeModule } from "./native-module.js";

interface Lz4Module {
  compressFrameSync(input: Buffer): Buffer;
}

const lz4 = new NativeModule<Lz4Module>("lz4-napi", "lz4");

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
/** Block maximum sizes by the BD byte's bits 4-6 (values 4-7). */
const BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

export function lz4Compress(input: Uint8Array): Buffer {
  return lz4.get().compressFrameSync(asBuffer(input));
}

export function lz4Decompress(input: Uint8Array, maxOutputBytes: number): Buffer {
  const out = new Lz4Output(maxOutputBytes, input.length);
  let p = 0;
  let frames = 0;
  while (p < input.length) {
    if (input.length - p < 4) throw corrupt("trailing bytes after the last frame");
    const magic = u32le(input, p);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (input.length - p < 8) throw corrupt("skippable frame is cut short");
      const size = u32le(input, p + 4);
      if (size > input.length - p - 8) throw corrupt("skippable frame is cut short");
      p += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) throw corrupt("not an LZ4 frame");
    p = decodeFrame(input, p + 4, out);
    frames++;
  }
  if (frames === 0) throw corrupt("no frame");
  return out.result();
}

/** Decodes the frame whose descriptor starts at `p` into `out`; returns where the frame ends. */
function decodeFrame(input: Uint8Array, p: number, out: Lz4Output): number {
  if (input.length - p < 3) throw corrupt("frame descriptor is cut short");
  const flg = input[p]!;
  const bd = input[p + 1]!;
  if (flg >>> 6 !== 1) throw corrupt("unknown frame version");
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0 || (bd & 0x70) >>> 4 < 4) {
    throw corrupt("reserved frame descriptor bits are set");
  }
  if ((flg & 0x01) !== 0) throw corrupt("frames with a dictionary are not supported");
  const independent = (flg & 0x20) !== 0;
  const blockChecksums = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const blockMax = BLOCK_MAX[(bd & 0x70) >>> 4]!;
  p += 2;
  let contentSize = -1;
  if (hasContentSize) {
    if (input.length - p < 9) throw corrupt("frame descriptor is cut short");
    const high = u32le(input, p + 4);
    // Anything of 2^32 bytes or more is past every bound this is used with.
    contentSize = high === 0 ? u32le(input, p) : Number.MAX_SAFE_INTEGER;
    out.expect(contentSize);
    p += 8;
  }
  p += 1; // header checksum
  const frameStart = out.position;
  for (;;) {
    if (input.length - p < 4) throw corrupt("block size is cut short");
    const word = u32le(input, p);
    p += 4;
    if (word === 0) break;
    const stored = word >>> 31 === 1;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw corrupt("block is larger than the frame's block size");
    if (size > input.length - p) throw corrupt("block is cut short");
    if (stored) out.copy(input, p, size);
    else out.decode(input, p, size, blockMax, independent);
    p += size + (blockChecksums ? 4 : 0);
    if (p > input.length) throw corrupt("block checksum is cut short");
  }
  if (contentChecksum) {
    p += 4;
    if (p > input.length) throw corrupt("content checksum is cut short");
  }
  if (contentSize >= 0 && out.position - frameStart !== contentSize) {
    throw corrupt("content size differs from the declared one");
  }
  return p;
}

/** The output buffer: grows by doubling, never past the bound. */
class Lz4Output {
  readonly #max: number;
  #buf: Buffer;
  position = 0;

  constructor(max: number, inputLength: number) {
    this.#max = max;
    this.#buf = Buffer.allocUnsafe(Math.min(max, Math.max(64 << 10, inputLength * 4)));
  }

  /** A declared content size: refused at once when past the bound, else room is made for it. */
  expect(contentSize: number): void {
    if (contentSize > this.#max - this.position) throw outputTooLarge("lz4", this.#max, contentSize);
    this.#reserve(this.position + contentSize);
  }

  copy(src: Uint8Array, at: number, size: number): void {
    if (size > this.#max - this.position) throw outputTooLarge("lz4", this.#max);
    this.#reserve(this.position + size);
    this.#buf.set(src.subarray(at, at + size), this.position);
    this.position += size;
  }

  decode(src: Uint8Array, at: number, size: number, blockMax: number, independent: boolean): void {
    const limit = Math.min(this.position + blockMax, this.#max);
    this.#reserve(limit);
    const start = this.position;
    const end = decodeLz4Block(src, at, at + size, this.#buf, start, limit, independent ? start : 0);
    if (end >= 0) {
      this.position = end;
      return;
    }
    if (end === LZ4_CORRUPT) throw corrupt("bad block data");
    if (limit === this.#max) throw outputTooLarge("lz4", this.#max);
    throw corrupt("block decodes to more than the frame's block size");
  }

  result(): Buffer {
    return this.#buf.subarray(0, this.position);
  }

  #reserve(size: number): void {
    if (size <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.min(this.#max, Math.max(size, 2 * this.#buf.length)));
    this.#buf.copy(next, 0, 0, this.position);
    this.#buf = next;
  }
}

function corrupt(why: string) {
  return corruptInput("lz4", why);
}

function u32le(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

function asBuffer(input: Uint8Array): Buffer {
  return Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

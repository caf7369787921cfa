/**
 * snappy (codec 2) with the `snappy` package (napi-rs, a prebuilt binary per platform inside the
 * registry packages). Kafka producers write it in two framings, and both are read:
 * - raw snappy (librdkafka, so kcat and confluent-kafka): a varint of the uncompressed length, then
 *   the compressed block;
 * - snappy-java's framing (the Java client's SnappyOutputStream): the 8-byte magic
 *   `82 'S' 'N' 'A' 'P' 'P' 'Y' 00`, a u32 version and a u32 compatible version (big-endian), then
 *   chunks of a u32 big-endian length and that many bytes of raw snappy.
 * Every raw block declares its uncompressed length up front, so the total is checked against the
 * bound before anything is decompressed. Conch writes raw snappy, as librdkafka does.
 */
import { corruptInput, outputTooLarge } from "./codec-errors.js";
import { NativeModule } from "./native-module.js";

interface SnappyModule {
  compressSync(input: Uint8Array): Buffer;
  uncompressSync(input: Uint8Array, options: { asBuffer: true }): Buffer;
}

const snappy = new NativeModule<SnappyModule>("snappy", "snappy");

const JAVA_MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00];
/** Magic, version, compatible version. */
const JAVA_HEADER_SIZE = 16;

export function snappyCompress(input: Uint8Array): Buffer {
  return snappy.get().compressSync(input);
}

export function snappyDecompress(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (hasJavaMagic(input)) return javaFramedDecompress(input, maxOutputBytes);
  const size = rawLength(input, 0, input.length);
  if (size > maxOutputBytes) throw outputTooLarge("snappy", maxOutputBytes, size);
  return rawBlock(input, size);
}

function hasJavaMagic(input: Uint8Array): boolean {
  if (input.length < JAVA_MAGIC.length) return false;
  for (let i = 0; i < JAVA_MAGIC.length; i++) if (input[i] !== JAVA_MAGIC[i]) return false;
  return true;
}

function javaFramedDecompress(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (input.length < JAVA_HEADER_SIZE) throw corruptInput("snappy", "snappy-java header is cut short");
  // First pass: every chunk's framing and declared size, so the output is bounded before it exists.
  let total = 0;
  let chunks = 0;
  for (let p = JAVA_HEADER_SIZE; p < input.length; chunks++) {
    const end = chunkEnd(input, p);
    total += rawLength(input, p + 4, end);
    if (total > maxOutputBytes) throw outputTooLarge("snappy", maxOutputBytes, total);
    p = end;
  }
  if (chunks === 0) throw corruptInput("snappy", "snappy-java stream has no chunks");
  const out = Buffer.allocUnsafe(total);
  let q = 0;
  for (let p = JAVA_HEADER_SIZE; p < input.length; ) {
    const end = chunkEnd(input, p);
    const block = input.subarray(p + 4, end);
    q += rawBlock(block, rawLength(block, 0, block.length)).copy(out, q);
    p = end;
  }
  return out;
}

/** Where the snappy-java chunk at `p` ends; throws when its length field or bytes are cut short. */
function chunkEnd(input: Uint8Array, p: number): number {
  if (input.length - p < 4) throw corruptInput("snappy", "snappy-java chunk length is cut short");
  const size = ((input[p]! << 24) | (input[p + 1]! << 16) | (input[p + 2]! << 8) | input[p + 3]!) >>> 0;
  if (size === 0 || size > input.length - p - 4) {
    throw corruptInput("snappy", "snappy-java chunk is empty or longer than the data");
  }
  return p + 4 + size;
}

/** The uncompressed length a raw snappy block at `p` declares (a varint of at most 5 bytes, < 2^32). */
function rawLength(input: Uint8Array, p: number, end: number): number {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (p + i >= end) break;
    const b = input[p + i]!;
    value += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) {
      if (value > 0xffffffff) break;
      return value;
    }
  }
  throw corruptInput("snappy", "bad uncompressed length");
}

function rawBlock(block: Uint8Array, size: number): Buffer {
  const module = snappy.get();
  let out: Buffer;
  try {
    out = module.uncompressSync(block, { asBuffer: true });
  } catch (err) {
    throw corruptInput("snappy", (err as Error).message);
  }
  if (out.length !== size) throw corruptInput("snappy", "length differs from the declared one");
  return out;
}

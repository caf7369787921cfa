/**
 * zstd (codec 4) with the `zstd-napi` package (the reference C library, compiled from the sources
 * inside the registry package when no prebuilt binary is at hand). Kafka clients write ordinary
 * zstd frames, with or without the content size (a streaming writer does not know it), possibly
 * several in a row. Decompression streams into an output that grows by doubling and never past the
 * bound, so neither a missing nor a false content size can make it allocate more; the decoder's
 * window is capped as well, which bounds the memory it takes for itself.
 */
import { ConchError } from "../errors.js";
import { corruptInput, outputTooLarge } from "./codec-errors.js";
import { NativeModule } from "./native-module.js";

interface StreamingDecoder {
  /** [bytes still to flush (0: a frame ended), bytes written, bytes consumed]. */
  decompressStream(dst: Uint8Array, src: Uint8Array): [number, number, number];
  setParameter(param: number, value: number): void;
  reset(directive: number): void;
}
interface Encoder {
  compress(dst: Uint8Array, src: Uint8Array, level: number): number;
}
interface ZstdBinding {
  DCtx: new () => StreamingDecoder;
  CCtx: new () => Encoder;
  compressBound(size: number): number;
  DParameter: { windowLogMax: number };
  ResetDirective: { sessionOnly: number };
}

const zstd = new NativeModule<ZstdBinding>("zstd-napi/binding.js", "zstd");

/** Kafka's (and zstd's) default level: fast, with most of the ratio. */
const LEVEL = 3;
/**
 * 2^23 = 8 MiB: above what the levels clients use pick (level 3 streams with 2 MiB), and the most
 * memory a hostile frame can make the decoder take for its window.
 */
const WINDOW_LOG_MAX = 23;

let encoder: Encoder | null = null;
let decoder: StreamingDecoder | null = null;
/** Reused across calls: the worst-case output of one compression, copied out at its real size. */
let scratch = Buffer.alloc(0);
const probe = Buffer.alloc(1);

export function zstdCompress(input: Uint8Array): Buffer {
  const binding = zstd.get();
  encoder ??= new binding.CCtx();
  const bound = binding.compressBound(input.length);
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound);
  const n = encoder.compress(scratch, input, LEVEL);
  return Buffer.from(scratch.subarray(0, n));
}

export function zstdDecompress(input: Uint8Array, maxOutputBytes: number): Buffer {
  const binding = zstd.get();
  if (decoder === null) {
    decoder = new binding.DCtx();
    decoder.setParameter(binding.DParameter.windowLogMax, WINDOW_LOG_MAX);
  }
  if (input.length === 0) throw corruptInput("zstd", "no data");
  let out = Buffer.allocUnsafe(Math.min(maxOutputBytes, Math.max(64 << 10, input.length * 4)));
  let produced = 0;
  let consumed = 0;
  try {
    for (;;) {
      if (produced === out.length && out.length < maxOutputBytes) {
        const next = Buffer.allocUnsafe(Math.min(maxOutputBytes, 2 * out.length));
        out.copy(next, 0, 0, produced);
        out = next;
      }
      // Full at the bound: one more byte out means too large, but the frame may still have its
      // epilogue to read, so the decoder goes on into a 1-byte probe.
      const full = produced === out.length;
      const [left, written, read] = decoder.decompressStream(
        full ? probe : out.subarray(produced),
        input.subarray(consumed),
      );
      if (full && written > 0) throw outputTooLarge("zstd", maxOutputBytes);
      produced += written;
      consumed += read;
      if (consumed === input.length && left === 0) break;
      if (written === 0 && read === 0) throw corruptInput("zstd", "data ends inside a frame");
    }
  } catch (err) {
    decoder.reset(binding.ResetDirective.sessionOnly);
    if (err instanceof ConchError) throw err;
    throw corruptInput("zstd", (err as Error).message);
  }
  return out.subarray(0, produced);
}

/**
 * Page-aligned buffers for direct I/O (O_DIRECT reads of old segments, storage/log-reader.ts). A
 * direct read needs memory aligned to the device's block, which Node's buffers do not promise
 * (malloc aligns to 16 bytes); a WebAssembly.Memory is made of whole pages, so its start is aligned.
 * Each buffer is a memory of its own, so that read-buffers.ts lends and takes back aligned buffers
 * as it does the others (by their ArrayBuffer), and one nobody hands back is collected like any
 * other. A memory reserves address space well beyond its size, so few are made: past
 * MAX_ALIVE_BUFFERS, or where WebAssembly cannot make one, there is none, and the read goes
 * through the page cache instead.
 */

/** Alignment of a direct read's memory, file position and length: a page, which covers 512 and 4096-byte blocks. */
export const DIRECT_ALIGN = 4096;
/** WebAssembly's page (64 KiB): the unit a memory is made of. */
const WASM_PAGE = 64 * 1024;
/** Aligned buffers alive at most (each memory reserves its own range of addresses). */
const MAX_ALIVE_BUFFERS = 32;

/** The part of the WebAssembly global used here (the compiler's libs here do not describe it). */
interface WasmGlobal {
  Memory: new (descriptor: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
}

const wasm = (globalThis as { WebAssembly?: WasmGlobal }).WebAssembly;
const aligned = new WeakSet<ArrayBufferLike>();
let alive = 0;
const collected = new FinalizationRegistry<null>(() => {
  alive--;
});

/**
 * A new page-aligned buffer of at least `bytes` bytes, or null when none can be made now, or when
 * making it would leave fewer than `spare` that can still be made.
 */
export function newAlignedBuffer(bytes: number, spare = 0): Buffer | null {
  if (wasm === undefined || alive + spare >= MAX_ALIVE_BUFFERS) return null;
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE));
  let memory: ArrayBuffer;
  try {
    memory = new wasm.Memory({ initial: pages, maximum: pages }).buffer;
  } catch {
    return null;
  }
  alive++;
  collected.register(memory, null);
  aligned.add(memory);
  return Buffer.from(memory);
}

/** Whether `buf` is (a view of) a buffer made by newAlignedBuffer, whose start is page-aligned. */
export function isAlignedBuffer(buf: Uint8Array): boolean {
  return aligned.has(buf.buffer);
}

/** Aligned buffers alive now (for tests). */
export function aliveAlignedBuffers(): number {
  return alive;
}

/**
 * Where deferred records' spills are framed (log-writer.ts, `appendSpill`): one append buffer for
 * every log that draws on the same append memory, instead of each log's own.
 *
 * A spill is a partition's few records of the last second or so. Framed into the partition's own
 * chunks, every partition took a first chunk of its own and grew its chunks slowly: the suite's 6b
 * made 18,818 chunks, and their allocations took about 5% of the broker's main thread. Spills of
 * every log framed one after another fill the same chunks quickly, so those grow to the full size
 * at once: the same run made 6,564 (most of them first chunks of partitions' ordinary appends),
 * their allocations under 1% (docs/performance/scale.md, "Workload 6b: spills framed into shared
 * chunks"). Nothing else changes: a chunk's appends and cached runs are counted per chunk,
 * whichever log they belong to, and it goes back to the free chunks once nothing refers to it.
 * The chunk being filled stays with the buffer while the process lives (no log's quiet check
 * trims it): one chunk for the whole process, 1 MiB once grown.
 */
import { AppendBuffer } from "./append-buffer.js";
import type { AppendMemory } from "./append-memory.js";

/** The full size of a spill chunk, that of a log's append chunk by default (partition-log.ts). */
const SPILL_CHUNK_BYTES = 1024 * 1024;

const buffers = new WeakMap<AppendMemory, AppendBuffer>();

/** The spills' append buffer of the logs drawing on `memory`, made by the first to ask. */
export function spillChunks(memory: AppendMemory): AppendBuffer {
  let buffer = buffers.get(memory);
  if (buffer === undefined) {
    buffer = new AppendBuffer(SPILL_CHUNK_BYTES, memory, { spills: true });
    buffers.set(memory, buffer);
  }
  return buffer;
}

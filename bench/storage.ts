/**
 * Benchmark of the storage engine: append N records (default 10,000,000) of 100-byte payloads in
 * batches of 1,000 to a partition log in a temporary directory, once per flush policy, then read
 * everything back. Batches are encoded with BatchBuilder before the clock starts for appending
 * (encode time is reported on its own); appends are pipelined with at most 64 in flight.
 * Prints records/s, MB/s and the share of wall time spent in garbage collection (PerformanceObserver
 * 'gc' entries).
 *
 *   npm run bench:storage                 # node --expose-gc dist/bench/storage.js [--records N]
 *   node dist/bench/storage.js --records 1000000 --policies interval [--no-raw]
 *
 * An unmeasured write of the same bytes to a file that is then deleted comes first, so that every
 * measured phase finds the page cache in the same state (see main()).
 * Before the log runs, the same batches are written to a plain file with writev and nothing else
 * ("raw writev"): the machine's ceiling at that moment, to read the log's numbers against; and
 * appended to a log whose file writes are discarded: the log's own CPU cost without the disk.
 *
 * It is a measurement, not a test: nothing here asserts a speed.
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { type PerformanceEntry, PerformanceObserver, performance } from "node:perf_hooks";
import { BatchBuilder } from "../src/format/batch-builder.js";
import { batchCount, recordSize } from "../src/format/batch-header.js";
import { type FlushPolicy, logConfig } from "../src/storage/config.js";
import type { FileOps } from "../src/storage/file-ops.js";
import { PartitionLog } from "../src/storage/partition-log.js";

const PAYLOAD_BYTES = 100;
const PER_BATCH = 1_000;
const IN_FLIGHT = 64;
const READ_MAX_BYTES = 1024 * 1024;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : fallback;
}

const records = Math.max(PER_BATCH, Number(arg("records", "10000000")));
const policies = arg("policies", "sync,interval,none").split(",") as FlushPolicy[];

const gcEntries: PerformanceEntry[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcEntries.push(e);
});
observer.observe({ entryTypes: ["gc"] });

/** GC milliseconds recorded between two marks of performance.now(). */
function gcMs(from: number, to: number): number {
  let total = 0;
  for (const e of gcEntries) if (e.startTime >= from && e.startTime < to) total += e.duration;
  return total;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function encode(): { batches: Buffer[]; bytes: number; ms: number } {
  const payload = Buffer.alloc(PAYLOAD_BYTES, 0x61);
  const builder = new BatchBuilder({ slabBytes: 8 * 1024 * 1024 });
  const batches: Buffer[] = [];
  let bytes = 0;
  const ts = Date.now();
  const t0 = performance.now();
  for (let n = 0; n < records; n += PER_BATCH) {
    const count = Math.min(PER_BATCH, records - n);
    for (let i = 0; i < count; i++) builder.add(payload, null, ts);
    const batch = builder.finish();
    bytes += batch.length;
    batches.push(batch);
  }
  return { batches, bytes, ms: performance.now() - t0 };
}

async function appendAll(log: PartitionLog, batches: Buffer[]): Promise<void> {
  const window: Promise<unknown>[] = new Array(IN_FLIGHT);
  for (let i = 0; i < batches.length; i++) {
    const slot = i % IN_FLIGHT;
    if (i >= IN_FLIGHT) await window[slot];
    window[slot] = log.append(batches[i]!);
  }
  await Promise.all(window.filter((p) => p !== undefined));
}

async function readAll(log: PartitionLog): Promise<number> {
  let offset = log.logStartOffset;
  let count = 0;
  for (;;) {
    const { records: buf } = await log.read(offset, READ_MAX_BYTES);
    if (buf.length === 0) return count;
    for (let at = 0; at < buf.length; at += recordSize(buf, at)) {
      count += batchCount(buf, at);
    }
    offset = log.logStartOffset + count;
  }
}

/** Appends every batch to `log` and prints one line: rate, MB/s, GC share and CPU of the phase. */
async function measureAppends(
  label: string,
  rateWidth: number,
  log: PartitionLog,
  batches: Buffer[],
  bytes: number,
): Promise<void> {
  globalThis.gc?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await appendAll(log, batches);
  const t1 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const wall = t1 - t0;
  console.log(
    `${label} ${fmt((records / wall) * 1000).padStart(rateWidth)} records/s` +
      `  ${fmt(bytes / 1e6 / (wall / 1000)).padStart(6)} MB/s  (${fmt(wall)} ms)` +
      `  GC ${((gcMs(t0, t1) / wall) * 100).toFixed(2)}%` +
      `  CPU user ${fmt(cpu.user / 1000)} ms, system ${fmt(cpu.system / 1000)} ms`,
  );
}

async function run(policy: FlushPolicy, batches: Buffer[], bytes: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "conch-bench-storage-"));
  try {
    const log = await PartitionLog.open(dir, logConfig({ flush: policy }));
    await measureAppends(`append flush=${policy.padEnd(8)}`, 12, log, batches, bytes);
    globalThis.gc?.();
    const r0 = performance.now();
    const read = await readAll(log);
    const r1 = performance.now();
    if (read !== records) throw new Error(`read back ${read} records, expected ${records}`);
    console.log(
      `read   flush=${policy.padEnd(8)} ${fmt((read / (r1 - r0)) * 1000).padStart(12)} records/s` +
        `  ${fmt(bytes / 1e6 / ((r1 - r0) / 1000)).padStart(6)} MB/s  (${fmt(r1 - r0)} ms)` +
        `  GC ${((gcMs(r0, r1) / (r1 - r0)) * 100).toFixed(2)}%`,
    );
    await log.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The machine's ceiling at the moment: the same batches written to a fresh file with plain
 * writev calls of IN_FLIGHT batches each, no validation, no log.
 */
async function rawWrite(batches: Buffer[], bytes: number, report: boolean): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "conch-bench-raw-"));
  try {
    const file = await open(join(dir, "raw"), "w");
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let position = 0;
    for (let i = 0; i < batches.length; i += IN_FLIGHT) {
      const group = batches.slice(i, i + IN_FLIGHT);
      const { bytesWritten } = await file.writev(group, position);
      position += bytesWritten;
    }
    const t1 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    await file.close();
    const wall = t1 - t0;
    if (!report) return;
    console.log(
      `raw writev (ceiling) ${fmt((records / wall) * 1000).padStart(12)} records/s` +
        `  ${fmt(bytes / 1e6 / (wall / 1000)).padStart(6)} MB/s  (${fmt(wall)} ms)` +
        `            CPU user ${fmt(cpu.user / 1000)} ms, system ${fmt(cpu.system / 1000)} ms`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The log's own CPU cost: the same appends through a FileOps whose writes and syncs do nothing, so
 * only validation, copying, offset stamping, indexing and acknowledgment are left.
 */
async function discardedWrites(batches: Buffer[], bytes: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "conch-bench-discard-"));
  const discard: FileOps = {
    async writev(_file, buffers) {
      let n = 0;
      for (const b of buffers) n += b.length;
      return n;
    },
    async datasync() {},
    async truncate() {},
    async preallocate() {
      return false;
    },
  };
  try {
    const log = await PartitionLog.open(dir, logConfig({ flush: "none", segmentBytes: 1 << 30 }), undefined, {
      fileOps: discard,
    });
    await measureAppends("append, writes discarded", 8, log, batches, bytes);
    await log.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `storage bench: ${fmt(records)} records of ${PAYLOAD_BYTES} B payload, ${PER_BATCH} per batch, ` +
      `${IN_FLIGHT} appends in flight, node ${process.version}, ${cpus().length} cores`,
  );
  const { batches, bytes, ms } = encode();
  console.log(
    `encode                ${fmt((records / ms) * 1000).padStart(12)} records/s  (${fmt(ms)} ms, ${fmt(bytes)} bytes)`,
  );
  // On a virtual machine the first write into never-used memory is slow (page faults reach the
  // host). The first phase to write this much would pay for the others, whose files reuse the page
  // cache it freed; so an unmeasured write primes it and every measured phase starts alike.
  await rawWrite(batches, bytes, false);
  if (!process.argv.includes("--no-raw")) {
    await rawWrite(batches, bytes, true);
    await discardedWrites(batches, bytes);
  }
  for (const policy of policies) await run(policy, batches, bytes);
  observer.disconnect();
}

await main();

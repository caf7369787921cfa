/**
 * Micro-benchmark of the compression codecs on Conch batches: 200 batches of 1,000 records with
 * 100-byte values (log-like JSON text, varied by a seeded generator, so neither trivially
 * compressible nor random), each batch's payload compressed and decompressed with each codec as
 * the producer (`compressBatch`) and the consumer and broker (`decompressBatch`) do it. Prints,
 * per codec, MB/s of uncompressed bytes through compression and decompression (median of the
 * measured rounds, wall clock, and per CPU-second of this process, which moves less on a shared
 * machine) and the compression ratio (stored bytes / uncompressed bytes).
 *
 *   npm run bench:codecs            # or: node dist/bench/codecs.js [rounds]
 *
 * It is a measurement, not a test: nothing here asserts a speed.
 */
import { performance } from "node:perf_hooks";
import { BatchBuilder, CODEC_NAMES, compressBatch, decompressBatch } from "../src/format/index.js";

const BATCHES = 200;
const PER_BATCH = 1_000;
const VALUE_BYTES = 100;
const ROUNDS = Math.max(1, Number(process.argv[2] ?? 5));
const WARMUP_ROUNDS = 1;
const BASE_MS = 1_700_000_000_000;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

/** A seeded xorshift, so every run compresses the same bytes. */
let seed = 0x2545f491;
function random(n: number): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
}

const EVENTS = ["view", "click", "add_to_cart", "checkout", "search", "login"];
const PATHS = ["/", "/products", "/products/item", "/cart", "/search", "/account/orders"];

/** A 100-byte log-like value: JSON with a few varying fields, padded or cut to size. */
function value(i: number): Buffer {
  const text = `{"ts":${BASE_MS + i * 7},"user":"u${random(50_000)}","event":"${EVENTS[random(EVENTS.length)]}","path":"${
    PATHS[random(PATHS.length)]
  }/${random(10_000)}","ms":${random(900)}}`;
  return Buffer.from(text.padEnd(VALUE_BYTES, " ").slice(0, VALUE_BYTES), "latin1");
}

function makeBatches(): Buffer[] {
  const builder = new BatchBuilder();
  const out: Buffer[] = [];
  for (let b = 0; b < BATCHES; b++) {
    for (let r = 0; r < PER_BATCH; r++) {
      const i = b * PER_BATCH + r;
      builder.add(value(i), null, BASE_MS + i);
    }
    out.push(Buffer.from(builder.finish()));
  }
  return out;
}

interface Measured {
  ms: number[];
  cpuUs: number;
}

function measure(run: () => number, into: Measured, record: boolean): number {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const n = run();
  const t1 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  if (record) {
    into.ms.push(t1 - t0);
    into.cpuUs += cpu.user + cpu.system;
  }
  return n;
}

function main(): void {
  const plain = makeBatches();
  const plainBytes = plain.reduce((n, b) => n + b.length - 49, 0);
  console.log(
    `codecs bench: ${BATCHES} batches of ${PER_BATCH} records, ${VALUE_BYTES}-byte values ` +
      `(${(plainBytes / 1e6).toFixed(1)} MB of records), node ${process.version}, ` +
      `${ROUNDS} measured rounds after ${WARMUP_ROUNDS} warm-up`,
  );
  console.log("codec    compress MB/s (per CPU-s)   decompress MB/s (per CPU-s)   ratio");
  for (let codec = 1 as 1 | 2 | 3 | 4; codec <= 4; codec++) {
    const comp: Measured = { ms: [], cpuUs: 0 };
    const decomp: Measured = { ms: [], cpuUs: 0 };
    let packed: Buffer[] = [];
    let sink = 0;
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      const record = round >= WARMUP_ROUNDS;
      sink += measure(
        () => {
          packed = plain.map((b) => compressBatch(b, codec));
          return packed.length;
        },
        comp,
        record,
      );
      sink += measure(
        () => {
          let n = 0;
          for (const b of packed) n += decompressBatch(b, 0, MAX_BATCH_BYTES).length;
          return n;
        },
        decomp,
        record,
      );
    }
    const stored = packed.reduce((n, b) => n + b.length - 49, 0);
    const rate = (m: Measured) => {
      const sorted = [...m.ms].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const wall = plainBytes / 1e6 / (median / 1000);
      const perCpu = (plainBytes * ROUNDS) / 1e6 / (m.cpuUs / 1e6);
      return `${wall.toFixed(0).padStart(8)} (${perCpu.toFixed(0).padStart(6)})`;
    };
    console.log(
      `${CODEC_NAMES[codec].padEnd(8)} ${rate(comp).padEnd(27)} ${rate(decomp).padEnd(29)} ${(stored / plainBytes).toFixed(3)}`,
    );
    if (Number.isNaN(sink)) console.log("unreachable");
  }
}

main();

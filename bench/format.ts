/**
 * Micro-benchmark of the record format codec: encode 1,000,000 records of 100-byte payload in
 * batches of 1,000 with BatchBuilder, validate every batch, and walk them all with RecordCursor.
 * Prints records/s per step (median of the measured rounds) and the share of each step's wall time
 * spent in garbage collection, from PerformanceObserver 'gc' entries, and in the kernel (system CPU
 * time: mostly page faults on freshly allocated slabs, which every retained batch needs). Records
 * per CPU-second (user + system time of the process over the measured rounds) is printed too: on a
 * machine shared with other work it moves much less than wall-clock records/s.
 *
 *   npm run bench:format            # or: node dist/bench/format.js [rounds]
 *
 * It is a measurement, not a test: nothing here asserts a speed.
 */
import { type PerformanceEntry, PerformanceObserver, performance } from "node:perf_hooks";
import { BatchBuilder, RecordCursor, stampBaseOffset, validateBatches } from "../src/format/index.js";

const RECORDS = 1_000_000;
const PER_BATCH = 1_000;
const PAYLOAD_BYTES = 100;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
const ROUNDS = Math.max(1, Number(process.argv[2] ?? 5));
/** Two warm-up rounds: the first one's optimised code is often thrown away once at its end. */
const WARMUP_ROUNDS = 2;
const BASE_MS = 1_700_000_000_000;

interface Step {
  name: string;
  /** Runs the step once over every record; returns a value that depends on the work done. */
  run: () => number;
}

const gcEntries: PerformanceEntry[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcEntries.push(e);
});
observer.observe({ entryTypes: ["gc"] });

const payload = Buffer.alloc(PAYLOAD_BYTES, 0x61);
const payloadString = payload.toString("latin1");
const keyString = "key-0000";
let batches: Buffer[] = [];
let stringBatches: Buffer[] = [];
let fetched = Buffer.alloc(0);

function encode(): number {
  const builder = new BatchBuilder();
  const out: Buffer[] = [];
  for (let i = 0; i < RECORDS; i++) {
    builder.add(payload, null, BASE_MS + i);
    if (builder.count === PER_BATCH) out.push(builder.finish());
  }
  batches = out;
  return out.length;
}

/** Keeps its batches too, so that both encode steps pay for the same amount of fresh memory. */
function encodeStrings(): number {
  const builder = new BatchBuilder();
  const out: Buffer[] = [];
  for (let i = 0; i < RECORDS; i++) {
    builder.add(payloadString, keyString, BASE_MS + i);
    if (builder.count === PER_BATCH) out.push(builder.finish());
  }
  stringBatches = out;
  return out.length;
}

function validate(): number {
  let records = 0;
  let offset = 0;
  for (const batch of batches) {
    records += validateBatches(batch, MAX_BATCH_BYTES).records;
    stampBaseOffset(batch, 0, offset);
    offset += PER_BATCH;
  }
  if (records !== RECORDS) throw new Error(`validated ${records} records, expected ${RECORDS}`);
  return records;
}

function walk(): number {
  const cursor = new RecordCursor(fetched);
  let records = 0;
  let check = 0;
  while (cursor.next()) {
    records++;
    check += cursor.offset + cursor.timestampMs + cursor.valueEnd - cursor.valueStart;
  }
  if (records !== RECORDS) throw new Error(`walked ${records} records, expected ${RECORDS}`);
  return check;
}

const steps: Step[] = [
  { name: "encode (Buffer value, no key)", run: encode },
  { name: "validate + stamp", run: validate },
  { name: "walk (RecordCursor)", run: walk },
  { name: "encode (string value + key)", run: encodeStrings },
];

/** Lets the observer's callback deliver the gc entries of the step that just ran. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function gcMsBetween(start: number, end: number): number {
  let ms = 0;
  for (const e of gcEntries) if (e.startTime >= start && e.startTime < end) ms += e.duration;
  return ms;
}

async function main(): Promise<void> {
  console.log(
    `format bench: ${RECORDS.toLocaleString("en-US")} records of ${PAYLOAD_BYTES} B, ` +
      `${PER_BATCH} per batch, node ${process.version}, ${ROUNDS} measured rounds after ${WARMUP_ROUNDS} warm-up`,
  );
  const times = new Map<string, number[]>();
  const windows = new Map<string, [number, number][]>();
  const systemUs = new Map<string, number>();
  const cpuUs = new Map<string, number>();
  let sink = 0;
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    for (const step of steps) {
      if (step.run === walk) fetched = Buffer.concat(batches);
      await settle();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      sink += step.run();
      const t1 = performance.now();
      const cpu = process.cpuUsage(cpu0);
      if (round < WARMUP_ROUNDS) continue;
      systemUs.set(step.name, (systemUs.get(step.name) ?? 0) + cpu.system);
      cpuUs.set(step.name, (cpuUs.get(step.name) ?? 0) + cpu.user + cpu.system);
      times.set(step.name, [...(times.get(step.name) ?? []), t1 - t0]);
      windows.set(step.name, [...(windows.get(step.name) ?? []), [t0, t1]]);
    }
  }
  await settle();
  observer.disconnect();
  const bytes = (list: Buffer[]) => list.reduce((n, b) => n + b.length, 0);
  console.log(
    `encoded bytes: ${bytes(batches)} (Buffer value), ${bytes(stringBatches)} (string value + key)`,
  );
  for (const step of steps) {
    const ms = (times.get(step.name) ?? []).sort((a, b) => a - b);
    const median = ms[Math.floor(ms.length / 2)] ?? Number.NaN;
    let total = 0;
    let gc = 0;
    for (const [start, end] of windows.get(step.name) ?? []) {
      total += end - start;
      gc += gcMsBetween(start, end);
    }
    const rate = Math.round(RECORDS / (median / 1000)).toLocaleString("en-US");
    const cpuRate = Math.round((RECORDS * ROUNDS) / ((cpuUs.get(step.name) ?? 0) / 1e6)).toLocaleString(
      "en-US",
    );
    console.log(
      `${step.name.padEnd(30)} ${rate.padStart(11)} records/s ${cpuRate.padStart(11)} per CPU-s  ` +
        `(median ${median.toFixed(1)} ms)  GC ${((100 * gc) / total).toFixed(1)}%  ` +
        `system ${((100 * (systemUs.get(step.name) ?? 0)) / 1000 / total).toFixed(1)}%`,
    );
  }
  if (Number.isNaN(sink)) console.log("unreachable");
}

await main();

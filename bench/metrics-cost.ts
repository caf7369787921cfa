/**
 * What the broker's metrics counting costs per append and per fetch, in one process: a broker with
 * counting on (the default) and one with `metrics: false`, the same work alternated between them
 * round by round, CPU time per operation compared as medians. Small batches (10 records) so that
 * the per-request counting is as large a share of the work as it can be; the bench suite
 * (`npm run bench`) measures the same switch end to end.
 *
 *   npm run build && node dist/bench/metrics-cost.js [rounds]
 *
 * It is a measurement, not a test: nothing here asserts a speed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Broker } from "../src/broker/broker.js";
import { BatchBuilder } from "../src/format/batch-builder.js";

const ROUNDS = Number(process.argv[2] ?? 10);
const APPENDS = 20_000;
const PER_BATCH = 10;

function batch(): Buffer {
  const b = new BatchBuilder({ slabBytes: 64 * 1024 });
  for (let i = 0; i < PER_BATCH; i++) b.add("x".repeat(100), null, Date.now());
  return Buffer.from(b.finish());
}

/** CPU microseconds (user + system) per append and per fetch, for one round on `broker`. */
async function round(broker: Broker, topic: string, records: Buffer): Promise<[number, number]> {
  let cpu = process.cpuUsage();
  for (let i = 0; i < APPENDS; i++) await broker.produce(topic, 0, records, "leader");
  let used = process.cpuUsage(cpu);
  const perAppend = (used.user + used.system) / APPENDS;
  const end = broker.partition(topic, 0).highWatermark;
  cpu = process.cpuUsage();
  let fetches = 0;
  for (let offset = end - APPENDS * PER_BATCH; offset < end; offset += PER_BATCH) {
    await broker.fetch({
      topic: topic,
      partition: 0,
      offset: offset,
      maxBytes: 1024,
      minBytes: 0,
      maxWaitMs: 0,
    });
    fetches++;
  }
  used = process.cpuUsage(cpu);
  return [perAppend, (used.user + used.system) / fetches];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dirs = [await mkdtemp(join(tmpdir(), "conch-mc-on-")), await mkdtemp(join(tmpdir(), "conch-mc-off-"))];
const on = await Broker.open({ dataDir: dirs[0]!, flush: "none", metrics: true });
const off = await Broker.open({ dataDir: dirs[1]!, flush: "none", metrics: false });
try {
  await on.createTopic("t", 1);
  await off.createTopic("t", 1);
  const records = batch();
  await round(on, "t", records); // warm-up: JIT, file growth
  await round(off, "t", records);
  const results = {
    on: { append: [] as number[], fetch: [] as number[] },
    off: { append: [] as number[], fetch: [] as number[] },
  };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so drift in the machine's load falls on both.
    const order: ["on" | "off", Broker][] =
      r % 2 === 0
        ? [
            ["on", on],
            ["off", off],
          ]
        : [
            ["off", off],
            ["on", on],
          ];
    for (const [name, broker] of order) {
      const [a, f] = await round(broker, "t", records);
      results[name].append.push(a);
      results[name].fetch.push(f);
    }
  }
  // Each round ran both brokers back to back: the difference within a round is the least noisy figure.
  const diff = (k: "append" | "fetch") => median(results.on[k].map((v, i) => v - results.off[k][i]!));
  console.log(
    `median per-round difference (on - off): append ${diff("append").toFixed(2)} µs, fetch ${diff("fetch").toFixed(2)} µs`,
  );
  for (const name of ["on", "off"] as const) {
    const x = results[name];
    console.log(
      `counting ${name.padEnd(3)}: append ${median(x.append).toFixed(2)} µs CPU (${Math.min(...x.append).toFixed(2)}-${Math.max(...x.append).toFixed(2)}), ` +
        `fetch ${median(x.fetch).toFixed(2)} µs CPU (${Math.min(...x.fetch).toFixed(2)}-${Math.max(...x.fetch).toFixed(2)}), ${ROUNDS} rounds of ${APPENDS} each`,
    );
  }
} finally {
  await on.close();
  await off.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
}

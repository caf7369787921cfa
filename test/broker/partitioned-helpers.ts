/**
 * Helpers of the tests of Produce version 3's deferred records on a broker: a partitioned produce
 * as the server makes it, records spread over every partition, crash copies of a data directory.
 */
import assert from "node:assert/strict";
import { cpSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import type { Broker } from "../../src/broker/broker.js";
import { SHARED_DIR } from "../../src/broker/shared-produce.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { PartitionIndex } from "../../src/format/partition-index.js";
import { checkPartitionedBatch } from "../../src/format/validate.js";
import type { AppendListener } from "../../src/storage/partition-log.js";
import { batchOf } from "./helpers.js";

export const PARTITIONS = 16;

/** Sends `records` as one partitioned batch the way Produce version 3 does; resolves when answered. */
export function producePartitioned(
  broker: Broker,
  topic: string,
  records: ReadonlyArray<[number, string]>,
  acks: "leader" | "durable" = "leader",
): Promise<Map<number, number>> {
  const b = new BatchBuilder({ partitioned: true, slabBytes: 64 * 1024 });
  for (const [partition, value] of records) b.addTo(partition, value, `k-${value}`, Date.now());
  const batch = Buffer.from(b.finish());
  assert.equal(checkPartitionedBatch(batch, 0, batch.length, batch.length), batch.length);
  const index = new PartitionIndex(batch, 0);
  return new Promise((resolve, reject) => {
    const listener: AppendListener = {
      appended: () => resolve(new Map(index.partitions.map((p, g) => [p, bases![g]!]))),
      appendFailed: reject,
    };
    const bases = broker.producePartitioned(topic, batch, index, acks, listener);
    if (bases === null) reject(new Error("not deferred"));
  });
}

/** Records for every partition, `perPartition` each, interleaved. */
export function spread(tag: string, perPartition: number): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let i = 0; i < perPartition; i++)
    for (let p = 0; p < PARTITIONS; p++) out.push([p, `${tag}-${p}-${i}`]);
  return out;
}

/** Every partition opened by one ordinary record, so that partitioned produces are deferred. */
export async function openEvery(broker: Broker, topic: string): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) await broker.produce(topic, p, batchOf([`open-${p}`]), "leader");
}

/** Bytes in the shared log's files. */
export function sharedBytes(dataDir: string): number {
  const dir = join(dataDir, SHARED_DIR);
  return readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).size, 0);
}

/**
 * What a crash of the process leaves: the data directory as the page cache holds it now, copied
 * before any timer runs (the deferred records are in the shared log only), its lock left behind.
 */
export function crashCopy(dataDir: string, into: string): void {
  cpSync(dataDir, into, { recursive: true });
  rmSync(join(into, "conch.lock"), { force: true });
}

export function capturingLogger(lines: string[]) {
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return pino({ level: "info" }, stream);
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ConchError } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";

/** A temp data directory removed when the test ends. */
export async function tempDataDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "conch-broker-"));
  t.after(() => removeDir(dir));
  return dir;
}

/**
 * Removes a test's data directory. `after` hooks run in the order they were added, so a broker
 * opened after the directory was made may still be closing (and its background work, such as a
 * segment being prepared, still writing) while this runs: retried rather than failing the test.
 */
function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/** A broker on a temp data directory, closed when the test ends (unless the test closed it). */
export async function openBroker(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
): Promise<{ broker: Broker; dataDir: string }> {
  // A directory made here is removed only after the broker has closed.
  const made = config.dataDir === undefined ? await mkdtemp(join(tmpdir(), "conch-broker-")) : null;
  const dataDir = config.dataDir ?? made!;
  const broker = await Broker.open({ segmentBytes: 64 * 1024, ...config, dataDir }).catch(async (err) => {
    if (made !== null) await removeDir(made);
    throw err;
  });
  t.after(async () => {
    await broker.close().catch(() => {});
    if (made !== null) await removeDir(made);
  });
  return { broker, dataDir };
}

/** One batch holding `values`, as its own buffer (the log stamps its base offset in place). */
export function batchOf(values: string[], timestampMs = Date.now()): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  for (const v of values) b.add(v, null, timestampMs);
  return Buffer.from(b.finish());
}

/** The values of every record of a partition, read from offset 0 to its end. */
export async function fetchValues(broker: Broker, topic: string, partition: number): Promise<string[]> {
  const values: string[] = [];
  // A read may end before the log does (at records deferred behind the shared log, spilled by the
  // next read): read on until one returns nothing new.
  for (let offset = 0; ; ) {
    const read = await broker.fetch({
      topic,
      partition,
      offset,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      minBytes: 0,
    });
    const records = recordsOf(read.records, offset);
    if (records.length === 0) return values;
    for (const [, v] of records) values.push(v);
    offset = records.at(-1)![0] + 1;
  }
}

/** The offset and value of every record in fetched bytes at or after `from`. */
export function recordsOf(bytes: Buffer, from = 0): [number, string][] {
  const out: [number, string][] = [];
  const c = new RecordCursor(bytes);
  while (c.next()) if (c.offset >= from) out.push([c.offset, c.value().toString()]);
  return out;
}

/** A predicate for assert.rejects/throws: a ConchError with this code (and message pattern). */
export function conchError(code: number, message?: RegExp): (err: unknown) => boolean {
  return (err) =>
    err instanceof ConchError && err.code === code && (message === undefined || message.test(err.message));
}

/**
 * Damaged stored data reaches no application silently. The README promises batches checked end to
 * end by a CRC32C, but nothing on the read path checked it: a flipped value byte was handed out as
 * if stored so, and a flipped header byte left the partition waiting for ever, with nothing in the
 * broker's log. Now the consumer checks each batch's CRC (unless `checkCrcs: false`) and stops the
 * partition with a CorruptBatchError naming topic, partition and offset; the broker's read path
 * checks every batch it reads from a file, quarantines what fails (logged once) and answers
 * CORRUPT_DATA, which the consumer reports the same way.
 *
 * Damage to stored data is made in a closed segment whose index has an entry per batch, so that
 * recovery (which checks from the last index entry on) keeps it and only the read path can meet
 * it. Damage the broker cannot see (on the wire) is made by a proxy (corrupting-proxy.ts).
 */
import assert from "node:assert/strict";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type TestContext, test } from "node:test";
import pino from "pino";
import { Broker } from "../../src/broker/broker.js";
import { Conch } from "../../src/client/conch.js";
import { type Consumer, CorruptBatchError } from "../../src/client/consumer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { ConchServer } from "../../src/server/conch-server.js";
import { CorruptingProxy } from "../client/corrupting-proxy.js";

/** Each batch holds one record of this many bytes: 1078 bytes a batch, three to a segment. */
const VALUE_BYTES = 1000;
const BATCH_BYTES = 1078;
/** Byte positions inside a batch (docs/format.md). */
const TIMESTAMP_BYTE = 3;
const BASE_OFFSET_LOW_BYTE = 16;
const VALUE_BYTE = BATCH_BYTES - 10;

interface Damaged {
  address: string;
  broker: Broker;
  /** The broker's log lines at error level. */
  errors: Record<string, unknown>[];
}

const config = { segmentBytes: 4096, indexIntervalBytes: 1, flush: "none" as const };

/**
 * Six single-record batches in topic "t" (offsets 0..5), then, with the broker stopped, one byte of
 * the batch at offset 1 (in the first segment) flipped, and the broker started again.
 */
async function damagedBroker(t: TestContext, byteInBatch: number | null): Promise<Damaged> {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-damage-"));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const first = await Broker.open({ ...config, dataDir });
  await first.createTopic("t", 1);
  for (let i = 0; i < 6; i++) {
    await first.produce("t", 0, batchOf(`${"x".repeat(VALUE_BYTES - 1)}${i}`), "leader");
  }
  await first.close();

  if (byteInBatch !== null) {
    const file = await open(join(dataDir, "topics", "t", "0", "00000000000000000000.wal"), "r+");
    const at = BATCH_BYTES + byteInBatch;
    const b = Buffer.alloc(1);
    await file.read(b, 0, 1, at);
    b[0] = b[0]! ^ 0x40;
    await file.write(b, 0, 1, at);
    await file.close();
  }

  const errors: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(line, _enc, done) {
      errors.push(JSON.parse(String(line)) as Record<string, unknown>);
      done();
    },
  });
  const broker = await Broker.open({ ...config, dataDir }, pino({ level: "error" }, sink));
  const server = new ConchServer(broker, { shutdownTimeoutMs: 1000 });
  const { port } = await server.listen(0, "127.0.0.1");
  t.after(async () => {
    await server.close();
    await broker.close();
  });
  return { address: `127.0.0.1:${port}`, broker, errors };
}

/** Good stored data, and a proxy that flips `byteInBatch` of the batch at offset 1 on its way out. */
async function wireDamage(t: TestContext, byteInBatch: number): Promise<CorruptingProxy> {
  const { address } = await damagedBroker(t, null);
  const [host, port] = address.split(":");
  return CorruptingProxy.start(t, { host: host!, port: Number(port) }, 1, byteInBatch);
}

function batchOf(value: string): Buffer {
  // The group tests' helper, inline: one batch of one record, timestamp now.
  const { BatchBuilder } = builder;
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add(value, null, Date.now());
  return Buffer.from(b.finish());
}
const builder = await import("../../src/format/batch-builder.js");

function consumer(t: TestContext, address: string, checkCrcs?: boolean): Consumer {
  const conch = new Conch({ brokers: [address] });
  t.after(() => conch.close());
  return conch.consumer({ topics: ["t"], maxWaitMs: 50, ...(checkCrcs === undefined ? {} : { checkCrcs }) });
}

/** Offsets (and last characters of the values) read until the consumer stops, or `n` are read. */
async function read(c: Consumer, n: number): Promise<{ got: string[]; error: unknown }> {
  const got: string[] = [];
  try {
    // Bounded: the damage used to block the partition for ever.
    for await (const m of c.messages({ signal: AbortSignal.timeout(5000) })) {
      got.push(`${m.offset}:${m.value.toString().slice(-2)}`);
      if (got.length === n) break;
    }
    return { got, error: null };
  } catch (error) {
    return { got, error };
  }
}

function assertCorruptAt(error: unknown, offset: number, code: number = ErrorCode.CORRUPT_BATCH): void {
  assert.ok(error instanceof CorruptBatchError, `a CorruptBatchError, not ${String(error)}`);
  assert.equal(error.code, code);
  assert.equal(error.topic, "t");
  assert.equal(error.partition, 0);
  assert.equal(error.offset, offset);
  assert.match(error.message, new RegExp(`t/0 at offset ${offset}`));
}

for (const [what, byte] of [
  ["a value byte", VALUE_BYTE],
  ["a header byte (the timestamp)", TIMESTAMP_BYTE],
] as const) {
  test(`${what} flipped on the wire: the consumer stops at it with CORRUPT_BATCH naming topic, partition, offset`, {
    timeout: 30_000,
  }, async (t) => {
    const { address } = await wireDamage(t, byte);
    const { got, error } = await read(consumer(t, address), 6);
    assert.deepEqual(got, ["0:x0"], "the batch before the damaged one is delivered");
    assertCorruptAt(error, 1);
  });

  test(`${what} flipped on the wire, checkCrcs: false: the consumer reads on`, {
    timeout: 30_000,
  }, async (t) => {
    const { address } = await wireDamage(t, byte);
    const { got, error } = await read(consumer(t, address, false), 6);
    assert.equal(error, null);
    assert.deepEqual(
      got.map((m) => m.split(":")[0]),
      ["0", "1", "2", "3", "4", "5"],
    );
  });
}

test("a header byte the CRC does not cover (the base offset) flipped: the broker quarantines it, logs where once and answers CORRUPT_DATA", {
  timeout: 30_000,
}, async (t) => {
  const { address, broker, errors } = await damagedBroker(t, BASE_OFFSET_LOW_BYTE);
  for (const checkCrcs of [true, false]) {
    const { got, error } = await read(consumer(t, address, checkCrcs), 6);
    assert.deepEqual(got, ["0:x0"]);
    assertCorruptAt(error, 1, ErrorCode.CORRUPT_DATA);
  }
  // Every read of it fails the same way; the log says so once, when it is quarantined.
  for (let i = 0; i < 5; i++) {
    await assert.rejects(
      broker.fetch({ topic: "t", partition: 0, offset: 1, maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 1 }),
      (e: unknown) => {
        return e instanceof ConchError && e.code === ErrorCode.CORRUPT_DATA && /bytes 1078-/.test(e.message);
      },
    );
  }
  assert.equal(errors.length, 1, JSON.stringify(errors));
  const line = errors[0]!;
  assert.equal(line.level, 50);
  assert.equal(line.topic, "t");
  assert.equal(line.partition, 0);
  assert.equal(line.segment, "00000000000000000000.wal");
  assert.equal(line.position, BATCH_BYTES);
});

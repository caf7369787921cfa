/**
 * Recovery of segments holding Kafka batches stored as they came (attribute bit 4): every byte of
 * such a batch is covered by the envelope CRC, Kafka's CRC32C, or the base-offset rules, so a
 * flipped byte anywhere is found. In the last batch of the last segment it is a torn tail and cut,
 * except in either base offset (the envelope's or the Kafka header's, outside every CRC), where the
 * batch is quarantined with the offsets its count says it held, as a Conch batch's would be; in an earlier batch it is quarantined, and the batches after it
 * stay readable.
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { batchBaseOffset, batchCount, recordSize } from "../../src/format/batch-header.js";
import { KAFKA_RECORD_BATCH_PAYLOAD } from "../../src/format/layout.js";
import { StoringBatches } from "../../src/kafka/convert/storing-batches.js";
import { RecordBatchBuilder } from "../../src/kafka/protocol/record-batch-builder.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { range, testConfig, withTempDir } from "./helpers.js";

const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 });
const storing = new StoringBatches();
const TS = 1_700_000_000_000;

/** A Kafka batch of 3 records, enveloped as the Kafka listener stores it. */
function kafkaBatch(i: number): Buffer {
  const b = new RecordBatchBuilder();
  for (let r = 0; r < 3; r++)
    b.add(TS + r, Buffer.from(`k${r}`), Buffer.from(`v${i}-${r}`), [Buffer.from("h"), null]);
  return Buffer.from(storing.fromKafka(b.finish({ baseOffset: 0 }), 1 << 20, TS));
}

/**
 * The envelope's base offset (bytes 9-16) and the Kafka header's (49-56), outside every CRC, but
 * for their first bytes: a bit flipped there puts the offset past 2^53 - 1, which the batch checks
 * refuse, for a Conch batch too.
 */
function baseOffsetByte(i: number): boolean {
  return (i > 9 && i < 17) || (i > 49 && i < 57);
}

async function fill(dir: string, appends: number): Promise<string> {
  const log = await PartitionLog.open(dir, config);
  for (let i = 0; i < appends; i++) await log.append(kafkaBatch(i));
  await log.close();
  const wals = (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort();
  return join(dir, wals.at(-1)!);
}

/** Every offset the log holds, from its batch headers (a Kafka batch's records are not walked here). */
async function storedOffsets(log: PartitionLog): Promise<number[]> {
  const out: number[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const { records } = await log.read(offset, 4096);
    if (records.length === 0) break;
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      const base = batchBaseOffset(records, at);
      for (let i = 0; i < batchCount(records, at); i++) out.push(base + i);
      offset = base + batchCount(records, at);
    }
  }
  return out;
}

async function openAfterCrash(dir: string, lastPath: string, bytes: Buffer): Promise<PartitionLog> {
  await writeFile(lastPath, bytes);
  await unlink(lastPath.replace(/\.wal$/, ".idx")).catch(() => {});
  return PartitionLog.open(dir, config);
}

test("recovery: a flipped byte anywhere in a stored Kafka batch is found (cut at the tail, else quarantined)", async () => {
  await withTempDir(async (dir) => {
    const lastPath = await fill(dir, 40);
    const original = await readFile(lastPath);
    const batches: { at: number; base: number; size: number }[] = [];
    for (let at = 0; at < original.length; at += recordSize(original, at)) {
      assert.equal(original.readUInt16BE(at + 33), KAFKA_RECORD_BATCH_PAYLOAD);
      batches.push({ at, base: batchBaseOffset(original, at), size: recordSize(original, at) });
    }
    assert.ok(batches.length >= 3);
    const end = batches.at(-1)!.base + 3;
    for (const k of [batches.length - 1, batches.length - 2]) {
      const target = batches[k]!;
      for (let i = 0; i < target.size; i++) {
        const damaged = Buffer.from(original);
        damaged[target.at + i]! ^= 0x01;
        const log = await openAfterCrash(dir, lastPath, damaged);
        const what = `byte ${i} of batch ${k}`;
        if (k === batches.length - 1 && !baseOffsetByte(i)) {
          assert.equal(log.logEndOffset, target.base, what);
          assert.deepEqual(await storedOffsets(log), range(0, target.base), what);
          await log.close();
          assert.equal(
            (await stat(lastPath)).size,
            target.at,
            `${what}: the file is cut at the damaged batch`,
          );
        } else {
          assert.equal(log.logEndOffset, end, what);
          const q = log.quarantined();
          assert.equal(q.length, 1, what);
          assert.deepEqual([q[0]!.firstOffset, q[0]!.lastOffset], [target.base, target.base + 2], what);
          await assert.rejects(log.read(target.base, 1), /quarantined/, what);
          if (k + 1 < batches.length) {
            const { records } = await log.read(target.base + 3, 1);
            assert.equal(batchBaseOffset(records, 0), target.base + 3, what);
          }
          await log.close();
        }
      }
    }
    // Undamaged, the segment reads back whole and every base offset is stamped in both headers.
    const log = await openAfterCrash(dir, lastPath, original);
    assert.equal(log.logEndOffset, end);
    assert.deepEqual(log.quarantined(), []);
    const { records } = await log.read(batches[0]!.base, 1 << 20);
    for (let at = 0; at < records.length; at += recordSize(records, at)) {
      assert.equal(records.readBigUInt64BE(at + 49), BigInt(batchBaseOffset(records, at)));
    }
    await log.close();
  });
});

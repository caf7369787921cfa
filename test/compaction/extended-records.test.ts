/**
 * Compaction over the extended record layout: headers are carried whole through a rewritten
 * batch, a null value is the tombstone and an empty one is a value, an empty key is a key, and a
 * null key is refused by a compacted log like a v1 record without one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { readHeaders } from "../../src/format/record-headers.js";
import { checkBatch } from "../../src/format/validate.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { compactConfig, T0, withTempDir } from "./helpers.js";

interface Seen {
  offset: number;
  key: string | null;
  value: string | null;
  headers: string;
}

/** Every record from the log start, read in place, its batches checked whole (CRC included). */
async function readBack(log: PartitionLog): Promise<Seen[]> {
  const out: Seen[] = [];
  const c = new RecordCursor();
  let offset = log.logStartOffset;
  for (;;) {
    const { records } = await log.read(offset, 1 << 20);
    if (records.length === 0) return out;
    for (let at = 0; at < records.length; ) {
      const size = checkBatch(records, at, records.length, 1 << 30);
      assert.ok(size > 0, `batch at ${at}: ${size}`);
      at += size;
    }
    c.reset(records);
    while (c.next()) {
      if (c.offset < offset) continue;
      offset = c.offset + 1;
      const headers = readHeaders(c.buffer, c.headersStart, c.headersEnd)
        .map((h) => `${h.key}=${h.value === null ? "null" : h.value.toString()}`)
        .join(",");
      out.push({
        offset: c.offset,
        key: c.key()?.toString() ?? null,
        value: c.valueNull ? null : c.value().toString(),
        headers,
      });
    }
  }
}

test("compaction keeps headers byte for byte, drops superseded records and expired null-value tombstones", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig({ deleteRetentionMs: 1000 }));
    try {
      const b = new BatchBuilder({ slabBytes: 4096 });
      // One batch with a record superseded later, so the batch is rewritten as a run, not copied.
      b.add("old", "a", T0, [["h", "1"]]);
      b.add("kept", "b", T0, [
        ["x", "1"],
        ["x", null],
        ["y", ""],
      ]);
      b.add("", "c", T0); // an empty value: a value, not a tombstone
      b.add("empty key", "", T0, { z: "2" });
      b.add(null, "d", T0); // a tombstone, expired at T0 + 10 s
      await log.append(Buffer.from(b.finish()));
      for (let i = 0; i < 30; i++) {
        b.add(`new ${i}`, "a", T0);
        await log.append(Buffer.from(b.finish()));
      }
      await log.compact(T0 + 10_000);
      const seen = await readBack(log);
      assert.deepEqual(
        seen.filter((r) => r.key !== "a"),
        [
          { offset: 1, key: "b", value: "kept", headers: "x=1,x=null,y=" },
          { offset: 2, key: "c", value: "", headers: "" },
          { offset: 3, key: "", value: "empty key", headers: "z=2" },
        ],
      );
      // The superseded first record went (its batch was rewritten, not copied); the active
      // segment's records are not compacted.
      const a = seen.filter((r) => r.key === "a").map((r) => r.value);
      assert.ok(!a.includes("old"));
      assert.equal(a.at(-1), "new 29");
    } finally {
      await log.close();
    }
  });
});

test("a compacted log refuses an extended record with a null key, and takes an empty key", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, compactConfig());
    try {
      const b = new BatchBuilder({ slabBytes: 4096 });
      b.add("v", "k", T0, { h: "1" });
      b.add("keyless", null, T0, { h: "2" });
      await assert.rejects(
        log.append(Buffer.from(b.finish())),
        (e: unknown) => (e as { code?: number }).code === ErrorCode.INVALID_BATCH,
      );
      b.add("v", "", T0);
      b.add(null, "k", T0, { h: "3" });
      await log.append(Buffer.from(b.finish()));
      assert.equal(log.logEndOffset, 2);
    } finally {
      await log.close();
    }
  });
});

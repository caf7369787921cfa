/**
 * Test-only helpers for the format tests: an independent bitwise CRC32C, a way to re-seal a batch
 * after tampering with it (so that the check under test, not the CRC, has to catch the change), and
 * a bounds-checking view that records every read outside an allowed range.
 */
import { readFileSync } from "node:fs";
import { BatchBuilder, BatchStatus, type Bytes, type RecordHeaders } from "../../src/format/index.js";

/**
 * The hex of each code block in the docs/format.md section under `heading` (up to the next `## `),
 * one string per block: each line's hex fields, before the comment that follows three spaces.
 */
export function docsFixtureBlocks(heading: string): string[] {
  const docs = readFileSync(new URL("../../../docs/format.md", import.meta.url), "utf8");
  const start = docs.indexOf(heading);
  if (start < 0) throw new Error(`docs/format.md has no section ${heading}`);
  const next = docs.indexOf("\n## ", start); // sections after this one are not its
  const section = docs.slice(start, next < 0 ? docs.length : next);
  return [...section.matchAll(/```\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .split("\n")
      .map((line) => line.split(/\s{3,}/)[0]!.replace(/\s/g, ""))
      .join(""),
  );
}

/** Bytes from hex written with spaces, newlines or `|` between fields for readability. */
export function hex(text: string): Buffer {
  return Buffer.from(text.replace(/[\s|]/g, ""), "hex");
}

/** Bitwise CRC32C (Castagnoli, reflected polynomial 0x82F63B78): slow, obviously right. */
export function refCrc32c(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

/**
 * The batch CRC as docs/format.md describes it, computed without src/format/crc.ts: bytes 0-8
 * (magic, timestamp), 17-28 (key size, payload size, count), and 33 to the end.
 */
export function refBatchCrc(batch: Uint8Array): number {
  let crc = refCrc32c(batch.subarray(0, 9));
  crc = refCrc32c(batch.subarray(17, 29), crc);
  return refCrc32c(batch.subarray(33), crc);
}

/** Rewrites the CRC of the batch filling `batch` so that only the field changes made are wrong. */
export function reseal(batch: Buffer): Buffer {
  batch.writeUInt32BE(refBatchCrc(batch), 29);
  return batch;
}

export interface TestRecord {
  value: Bytes | null;
  key: Bytes | null;
  timestampMs: number;
  headers?: RecordHeaders | null;
}

/** One batch of `records`, copied out of the builder's slab so that tests may change it freely. */
export function buildBatch(records: readonly TestRecord[], slabBytes?: number): Buffer {
  const builder = new BatchBuilder(slabBytes === undefined ? {} : { slabBytes });
  for (const r of records) builder.add(r.value, r.key, r.timestampMs, r.headers ?? null);
  return Buffer.from(builder.finish());
}

/** The bytes a key or value is stored as. */
export function bytesOf(b: Bytes): Buffer {
  return typeof b === "string" ? Buffer.from(b, "utf8") : Buffer.from(b);
}

/** A small valid v1 batch of three records (keys, an empty value, a non-ASCII key) used by many tests. */
export function smallBatch(): Buffer {
  return buildBatch([
    { value: "v1", key: "k1", timestampMs: 1_700_000_000_000 },
    { value: "", key: null, timestampMs: 1_700_000_000_001 },
    { value: "value", key: "ключ", timestampMs: 1_699_999_999_999 },
  ]);
}

/**
 * A small valid extended batch of three records: headers (a null value, a repeated key), a null
 * key and an empty value, and a tombstone (a null value).
 */
export function smallExtendedBatch(): Buffer {
  return buildBatch([
    {
      value: "v1",
      key: "k1",
      timestampMs: 1_700_000_000_000,
      headers: [
        ["a", "1"],
        ["b", null],
        ["a", ""],
      ],
    },
    { value: "", key: null, timestampMs: 1_700_000_000_001 },
    { value: null, key: "ключ", timestampMs: 1_699_999_999_999 },
  ]);
}

/** Where inner record `i` of `batch` starts, in either layout. */
export function innerRecordAt(batch: Buffer, i: number): number {
  const extended = (batch.readUInt16BE(33) & 0x0008) !== 0;
  const size = (at: number) => {
    const n = batch.readUInt32BE(at);
    return extended && n === 0xffffffff ? 0 : n;
  };
  let p = 49;
  for (let k = 0; k < i; k++)
    p += 29 + size(p + 17) + size(p + 21) + (extended ? batch.readUInt32BE(p + 25) : 0);
  return p;
}

/**
 * A proxy over `buf` that behaves like it for the code under test but records, in `violations`,
 * every element read at an index outside [lo, hi) and every `subarray` reaching outside it.
 * Out-of-range element reads on a plain Buffer return undefined silently; this makes them visible.
 */
export function boundedView(buf: Buffer, lo: number, hi: number): { view: Buffer; violations: string[] } {
  const violations: string[] = [];
  const view = new Proxy(buf, {
    get(target, prop) {
      if (typeof prop === "string" && prop !== "" && !Number.isNaN(Number(prop))) {
        const i = Number(prop);
        if (!Number.isInteger(i) || i < lo || i >= hi) violations.push(`read [${prop}]`);
        return target[i];
      }
      if (prop === "subarray") {
        return (start = 0, end = target.length) => {
          if (start < lo || end > hi || start > end) violations.push(`subarray(${start}, ${end})`);
          return target.subarray(start, end);
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { view, violations };
}

/** A checkBatch result by name: a BatchStatus, or the size it returned. */
export function statusName(status: number): string {
  const entry = Object.entries(BatchStatus).find(([, v]) => v === status);
  return entry ? entry[0] : status > 0 ? `size ${status}` : `status ${status}`;
}

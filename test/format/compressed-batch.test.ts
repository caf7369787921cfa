/**
 * Compressed batches: golden fixtures for each codec (the "three records" batch of golden.test.ts,
 * its payload compressed; docs/format.md shows the same bytes), what checkBatch and validateBatches
 * check of them, and how readers expand them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BatchBuilder,
  BatchStatus,
  batchCodec,
  batchCrc,
  CODEC_NAMES,
  type CodecId,
  ConchError,
  checkBatch,
  compressBatch,
  decompressBatch,
  ErrorCode,
  expandBatches,
  RecordCursor,
  stampBaseOffset,
  validateBatches,
} from "../../src/format/index.js";
import { docsFixtureBlocks, hex } from "./helpers.js";

/** golden.test.ts's THREE_RECORDS: "k1" "v1" at T, "k2" with an empty value at T+1, "ключ" "🐚 conch" at T-1. */
const THREE_RECORDS = hex(`
  c1 17979cfe36394240 0000000000000000 00000014 0000006f 00000003
  fee72169 0000 0000 ffffffffffffffff 00000000
  c1 17979cfe362a0000 0000000000000000 00000002 00000002 00000001 6b31 7631
  c1 17979cfe36394240 0000000000000001 00000002 00000000 00000001 6b32
  c1 17979cfe361abdc0 0000000000000002 00000008 0000000a 00000001 d0bad0bbd18ed187 f09f909a20636f6e6368
`);

/** The same batch with its payload compressed: header (payload size = compressed size), metadata (codec bits), payload. */
const COMPRESSED: Record<Exclude<CodecId, 0>, Buffer> = {
  1: hex(`
    c1 17979cfe36394240 0000000000000000 00000014 00000055 00000003
    37791733 0001 0000 ffffffffffffffff 00000000
    1f8b08000000000000033b283e7dce3f332d0664c004c58cd986658607c10a2c
    9d1ca0928c5049303bdb08222db5f700925e0e0606062e90f4855d17765fecbb
    d8fe61fe84590ac9f979c9190009b3f59c6f000000
  `),
  2: hex(`
    c1 17979cfe36394240 0000000000000000 00000014 00000051 00000003
    809d74ad 0002 0000 ffffffffffffffff 00000000
    6f1cc117979cfe362a002e010008020000050410016b3176310921083942400d
    2200010d1d010108016b32091f081abdc001100d1b68080000000a00000001d0
    bad0bbd18ed187f09f909a20636f6e6368
  `),
  3: hex(`
    c1 17979cfe36394240 0000000000000000 00000014 00000062 00000003
    01aad72d 0003 0000 ffffffffffffffff 00000000
    04224d186040825300000088c117979cfe362a0001001302040052016b317631
    210033394240220013011d007200000000016b321f00321abdc01200f0110002
    000000080000000a00000001d0bad0bbd18ed187f09f909a20636f6e63680000
    0000
  `),
  4: hex(`
    c1 17979cfe36394240 0000000000000000 00000014 00000051 00000003
    4a12a02d 0004 0000 ffffffffffffffff 00000000
    28b52ffd206f450200e402c117979cfe362a0002016b3176313942400100321a
    bdc0080000000ad0bad0bbd18ed187f09f909a20636f6e63680a004308fd2a04
    9047a8397019c802e441d4d05dc6381007
  `),
};
const CODECS = [1, 2, 3, 4] as const;

function isConchError(code: number) {
  return (err: unknown) => err instanceof ConchError && err.code === code;
}

/** `plain`'s records compressed with `codec` after `tamper` changed them (compressBatch does not check). */
function compressedWith(codec: CodecId, plain: Buffer, tamper: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(plain);
  tamper(copy);
  copy.writeUInt32BE(batchCrc(copy, 0, copy.length), 29);
  return compressBatch(copy, codec);
}

test("golden compressed batches: each is checked, validated and expands to the uncompressed golden batch", () => {
  for (const codec of CODECS) {
    const fixture = COMPRESSED[codec];
    const name = CODEC_NAMES[codec];
    assert.equal(batchCodec(fixture, 0), codec, name);
    assert.equal(checkBatch(fixture, 0, fixture.length, 1 << 20), fixture.length, name);
    assert.deepEqual(validateBatches(fixture, 1 << 20), { batches: 1, records: 3 }, name);
    assert.deepEqual(decompressBatch(fixture, 0, 1 << 20), THREE_RECORDS, name);
    // What the producer writes reads back the same (the compressed bytes may differ by library version).
    assert.deepEqual(decompressBatch(compressBatch(THREE_RECORDS, codec), 0, 1 << 20), THREE_RECORDS, name);
  }
});

test("docs/format.md shows the compressed golden fixtures", () => {
  assert.deepEqual(
    docsFixtureBlocks("## Compressed batches"),
    CODECS.map((c) => COMPRESSED[c].toString("hex")),
  );
});

test("the CRC covers the stored, compressed bytes, and stamping the base offset keeps it valid", () => {
  for (const codec of CODECS) {
    const b = Buffer.from(COMPRESSED[codec]);
    stampBaseOffset(b, 0, 42);
    assert.equal(checkBatch(b, 0, b.length, 1 << 20), b.length);
    const expanded = decompressBatch(b, 0, 1 << 20);
    assert.equal(expanded.readUInt32BE(13), 42, "the base offset is kept");
    assert.equal(checkBatch(expanded, 0, expanded.length, 1 << 20), expanded.length);
    for (const at of [49, b.length - 1]) {
      const flipped = Buffer.from(b);
      flipped[at]! ^= 1;
      assert.equal(
        checkBatch(flipped, 0, flipped.length, 1 << 20),
        BatchStatus.BAD_CRC,
        `${CODEC_NAMES[codec]} byte ${at}`,
      );
    }
  }
});

test("validateBatches checks the records inside a compressed batch with the uncompressed rules", () => {
  const cases: [string, (b: Buffer) => void][] = [
    ["a wrong offset delta", (b) => b.writeUInt32BE(5, 49 + 33 + 13)],
    ["a count above the records", (b) => b.writeUInt32BE(4, 25)],
    ["a count below the records", (b) => b.writeUInt32BE(2, 25)],
    ["a record timestamp above the batch's", (b) => b.writeUInt32BE(0x17979cff, 49 + 1)],
    ["a key running past the payload", (b) => b.writeUInt32BE(200, 49 + 17)],
  ];
  for (const codec of CODECS) {
    for (const [what, tamper] of cases) {
      const bad = compressedWith(codec, THREE_RECORDS, tamper);
      // The envelope is sound and its CRC matches: a recovery scan keeps it; ingest refuses it.
      assert.equal(checkBatch(bad, 0, bad.length, 1 << 20), bad.length, `${CODEC_NAMES[codec]}: ${what}`);
      assert.throws(
        () => validateBatches(bad, 1 << 20),
        isConchError(ErrorCode.INVALID_BATCH),
        `${CODEC_NAMES[codec]}: ${what}`,
      );
    }
  }
});

test("a compressed payload that does not decompress is CORRUPT_BATCH; one too large is BATCH_TOO_LARGE", () => {
  for (const codec of CODECS) {
    const bad = Buffer.from(COMPRESSED[codec]);
    bad[52]! ^= 0x55;
    bad.fill(0xee, bad.length - 6);
    bad.writeUInt32BE(batchCrc(bad, 0, bad.length), 29);
    assert.throws(
      () => validateBatches(bad, 1 << 20),
      (err: unknown) => {
        assert.ok(err instanceof ConchError, String(err));
        assert.ok(err.code === ErrorCode.CORRUPT_BATCH || err.code === ErrorCode.INVALID_BATCH, err.message);
        assert.match(err.message, /^batch 0: /);
        return true;
      },
    );
    // The compressed batch fits the limit; its records, decompressed, do not.
    const fixture = COMPRESSED[codec];
    assert.throws(
      () => validateBatches(fixture, THREE_RECORDS.length - 1),
      isConchError(ErrorCode.BATCH_TOO_LARGE),
    );
    assert.equal(validateBatches(fixture, THREE_RECORDS.length).records, 3);
  }
});

test("codecs 5-7 are UNSUPPORTED_COMPRESSION", () => {
  for (let codec = 5; codec <= 7; codec++) {
    const b = Buffer.from(THREE_RECORDS);
    b.writeUInt16BE(codec, 33);
    b.writeUInt32BE(batchCrc(b, 0, b.length), 29);
    assert.equal(checkBatch(b, 0, b.length, 1 << 20), BatchStatus.UNSUPPORTED_COMPRESSION);
    assert.throws(() => validateBatches(b, 1 << 20), isConchError(ErrorCode.UNSUPPORTED_COMPRESSION));
  }
});

test("expandBatches: compressed batches among plain ones expand in place; none compressed costs no copy", () => {
  const builder = new BatchBuilder();
  builder.add("plain before", "a", 1000);
  const before = Buffer.from(builder.finish());
  builder.add("plain after", null, 2000);
  const after = Buffer.from(builder.finish());
  stampBaseOffset(before, 0, 7);
  const middle = Buffer.from(COMPRESSED[4]);
  stampBaseOffset(middle, 0, 8);
  stampBaseOffset(after, 0, 11);
  const cut = after.subarray(0, 40);
  const stored = Buffer.concat([before, middle, after, cut]);
  const expanded = expandBatches(stored, 0, stored.length, 1 << 20);
  const three = Buffer.from(THREE_RECORDS);
  stampBaseOffset(three, 0, 8);
  assert.deepEqual(expanded, Buffer.concat([before, three, after, cut]));
  const offsets: number[] = [];
  const values: string[] = [];
  const cursor = new RecordCursor().reset(expanded, 0, expanded.length - cut.length);
  while (cursor.next()) {
    offsets.push(cursor.offset);
    values.push(cursor.value().toString());
  }
  assert.deepEqual(offsets, [7, 8, 9, 10, 11]);
  assert.deepEqual(values, ["plain before", "v1", "", "🐚 conch", "plain after"]);

  const plain = Buffer.concat([before, after]);
  const same = expandBatches(plain, 0, plain.length, 1 << 20);
  assert.equal(same.buffer, plain.buffer);
  assert.equal(same.byteOffset, plain.byteOffset);
  // A RecordCursor given a compressed batch refuses it rather than misread it.
  assert.throws(() => {
    const c = new RecordCursor().reset(middle);
    while (c.next());
  }, isConchError(ErrorCode.INVALID_BATCH));
});

/**
 * The codecs API: round trips for every codec, the framings Kafka clients write (fixtures made by
 * the reference lz4 and zstd tools, snappy-java framing built by hand as its format says), and the
 * bound: oversized, truncated and corrupted inputs throw a ConchError, never anything else, and
 * never return more than the bound.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  CODEC_NAMES,
  type CodecId,
  codecFromName,
  compress,
  decompress,
} from "../../../src/format/codecs/index.js";
import { NativeModule } from "../../../src/format/codecs/native-module.js";
import { ConchError, ErrorCode } from "../../../src/format/errors.js";

const CODECS: CodecId[] = [0, 1, 2, 3, 4];
const REAL_CODECS: CodecId[] = [1, 2, 3, 4];
const TEXT = "conch conch conch conch conch conch conch conch, a shell of the sea; conch conch conch!";

function isConchError(code?: number) {
  return (err: unknown) => err instanceof ConchError && (code === undefined || err.code === code);
}

/** Data with repeats in it, as record batches have: chunks of random bytes, each repeated. */
const compressible = fc
  .array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 30 })), {
    maxLength: 60,
  })
  .map((parts) => Buffer.concat(parts.flatMap(([bytes, n]) => Array<Uint8Array>(n).fill(bytes))));
const anyData = fc.oneof(fc.uint8Array({ maxLength: 3000 }), compressible);

test("codec names and numbers are Kafka's", () => {
  assert.deepEqual(CODEC_NAMES, ["none", "gzip", "snappy", "lz4", "zstd"]);
  CODEC_NAMES.forEach((name, id) => {
    assert.equal(codecFromName(name), id);
  });
  assert.throws(() => codecFromName("brotli"), isConchError(ErrorCode.UNSUPPORTED_COMPRESSION));
  assert.throws(() => codecFromName("GZIP"), isConchError(ErrorCode.UNSUPPORTED_COMPRESSION));
});

test("every codec round-trips any bytes, and the exact size is within the bound", () => {
  for (const codec of CODECS) {
    fc.assert(
      fc.property(anyData, (data) => {
        const packed = compress(codec, data);
        assert.deepEqual(decompress(codec, packed, data.length), Buffer.from(data));
        if (data.length > 0) {
          assert.throws(
            () => decompress(codec, packed, data.length - 1),
            isConchError(ErrorCode.BATCH_TOO_LARGE),
          );
        }
      }),
      { numRuns: 60 },
    );
  }
});

test("large compressible inputs round-trip and shrink", () => {
  const data = Buffer.alloc(3 << 20);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251 < 40 ? i & 0xff : 0x61;
  for (const codec of REAL_CODECS) {
    const packed = compress(codec, data);
    assert.ok(packed.length < data.length / 2, `${CODEC_NAMES[codec]}: ${packed.length}`);
    assert.ok(decompress(codec, packed, data.length).equals(data), CODEC_NAMES[codec]);
  }
});

test("output past the bound is refused with BATCH_TOO_LARGE, not produced", () => {
  const zeros = Buffer.alloc(4 << 20);
  for (const codec of REAL_CODECS) {
    const packed = compress(codec, zeros);
    assert.throws(
      () => decompress(codec, packed, 64 << 10),
      isConchError(ErrorCode.BATCH_TOO_LARGE),
      CODEC_NAMES[codec],
    );
  }
});

test("a declared size past the bound is refused before anything is allocated", () => {
  // snappy: a varint claiming 2^32 - 1 bytes, then nothing.
  assert.throws(
    () => decompress(2, Buffer.from("ffffffff0f00", "hex"), 1 << 20),
    isConchError(ErrorCode.BATCH_TOO_LARGE),
  );
  // lz4: a frame declaring 2^40 bytes of content.
  const frame = Buffer.from("04224d18 6840 0000000000010000 00 00000000".replace(/ /g, ""), "hex");
  assert.throws(() => decompress(3, frame, 1 << 20), isConchError(ErrorCode.BATCH_TOO_LARGE));
});

test("truncated input throws a ConchError for every cut", () => {
  for (const codec of REAL_CODECS) {
    const packed = compress(codec, Buffer.from(TEXT.repeat(20)));
    for (let cut = 0; cut < packed.length; cut++) {
      assert.throws(
        () => decompress(codec, packed.subarray(0, cut), 1 << 20),
        isConchError(),
        `${CODEC_NAMES[codec]} cut at ${cut}`,
      );
    }
  }
});

test("corrupted input throws a ConchError or gives bytes within the bound, never anything else", () => {
  for (const codec of REAL_CODECS) {
    fc.assert(
      fc.property(
        compressible,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        (data, flips) => {
          const packed = Buffer.from(compress(codec, data));
          for (const [at, xor] of flips) packed[at % packed.length]! ^= xor;
          const bound = data.length + 100;
          try {
            const out = decompress(codec, packed, bound);
            assert.ok(out.length <= bound);
          } catch (err) {
            assert.ok(err instanceof ConchError, `${CODEC_NAMES[codec]}: ${String(err)}`);
          }
        },
      ),
      { numRuns: 150 },
    );
  }
});

test("random bytes never crash a decoder", () => {
  for (const codec of REAL_CODECS) {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (junk) => {
        try {
          assert.ok(decompress(codec, junk, 4096).length <= 4096);
        } catch (err) {
          assert.ok(err instanceof ConchError, `${CODEC_NAMES[codec]}: ${String(err)}`);
        }
      }),
      { numRuns: 200 },
    );
  }
});

test("snappy: the snappy-java framing (Java client) and raw blocks (librdkafka) both read", () => {
  const a = Buffer.from(TEXT);
  const b = Buffer.from("second chunk of the same stream ".repeat(3));
  const rawA = compress(2, a);
  const rawB = compress(2, b);
  const header = Buffer.from("82534e41505059000000000100000001", "hex");
  const chunk = (raw: Buffer) =>
    Buffer.concat([Buffer.from([0, 0, raw.length >> 8, raw.length & 0xff]), raw]);
  const framed = Buffer.concat([header, chunk(rawA), chunk(rawB)]);
  assert.deepEqual(decompress(2, framed, 1000), Buffer.concat([a, b]));
  assert.deepEqual(decompress(2, rawA, 1000), a);
  // The bound counts every chunk's declared size before any is decompressed.
  assert.throws(
    () => decompress(2, framed, a.length + b.length - 1),
    isConchError(ErrorCode.BATCH_TOO_LARGE),
  );
  // A chunk whose length passes the end, or a header alone.
  assert.throws(
    () => decompress(2, Buffer.concat([header, chunk(rawA).subarray(0, 10)]), 1000),
    isConchError(ErrorCode.CORRUPT_BATCH),
  );
  assert.throws(() => decompress(2, header, 1000), isConchError(ErrorCode.CORRUPT_BATCH));
});

test("lz4: frames from the reference tool, with and without content size and checksums", () => {
  const fixtures = [
    // lz4 -c (content checksum)
    "04224d186440a7290000006f636f6e636820060016fa062c2061207368656c6c206f6620746865207365613b3f00506f6e636821000000005c8e4371",
    // lz4 -BX (block checksums)
    "04224d187440bd290000006f636f6e636820060016fa062c2061207368656c6c206f6620746865207365613b2700506f6e636821492d1420000000005c8e4371",
    // lz4 --content-size
    "04224d186c405700000000000000f8290000006f636f6e636820060016fa062c2061207368656c6c206f6620746865207365613b3f00506f6e636821000000005c8e4371",
  ];
  for (const hex of fixtures) assert.equal(decompress(3, Buffer.from(hex, "hex"), 1000).toString(), TEXT);
  // A declared content size that disagrees with the blocks is corrupt.
  const wrongSize = Buffer.from(fixtures[2]!, "hex");
  wrongSize[6] = 0x56;
  assert.throws(() => decompress(3, wrongSize, 1000), isConchError(ErrorCode.CORRUPT_BATCH));
});

test("lz4: a dependent block may refer back into the block before it; an independent one may not", () => {
  // FLG 0x40 (dependent blocks) or 0x60 (independent), BD 0x40, header checksum (not checked);
  // block 1 stored: "abcd"; block 2: a match of 4 at offset 4, then the literal "x"; end mark.
  const frame = (flg: string) =>
    Buffer.from(
      `04224d18${flg}4000` + "04000080" + "61626364" + "05000000" + "0004001078" + "00000000",
      "hex",
    );
  assert.equal(decompress(3, frame("40"), 100).toString(), "abcdabcdx");
  assert.throws(() => decompress(3, frame("60"), 100), isConchError(ErrorCode.CORRUPT_BATCH));
});

test("zstd: frames with and without a content size (a streaming writer's), and several in a row", () => {
  const withSize = Buffer.from(
    "28b52ffd24572d0100e0636f6e6368202c2061207368656c6c206f6620746865207365613b21020085e031814a11e9925db1",
    "hex",
  );
  const streamed = Buffer.from(
    "28b52ffd04582d0100e0636f6e6368202c2061207368656c6c206f6620746865207365613b21020085e031814a11e9925db1",
    "hex",
  );
  assert.equal(decompress(4, withSize, 1000).toString(), TEXT);
  assert.equal(decompress(4, streamed, 1000).toString(), TEXT);
  assert.equal(decompress(4, Buffer.concat([streamed, withSize]), 1000).toString(), TEXT + TEXT);
  assert.equal(decompress(4, streamed, TEXT.length).toString(), TEXT);
  assert.throws(() => decompress(4, streamed, TEXT.length - 1), isConchError(ErrorCode.BATCH_TOO_LARGE));
});

test("gzip: concatenated members read as one", () => {
  const twice = Buffer.concat([compress(1, Buffer.from(TEXT)), compress(1, Buffer.from(TEXT))]);
  assert.equal(decompress(1, twice, 1000).toString(), TEXT + TEXT);
});

test("a codec whose package does not load is UNSUPPORTED_COMPRESSION naming the package, every time", () => {
  const missing = new NativeModule<unknown>("@conch-test/no-such-codec/binding.js", "brotli");
  for (let i = 0; i < 2; i++) {
    assert.throws(
      () => missing.get(),
      (err: unknown) =>
        err instanceof ConchError &&
        err.code === ErrorCode.UNSUPPORTED_COMPRESSION &&
        err.message.includes("@conch-test/no-such-codec") &&
        err.message.startsWith("brotli compression"),
    );
  }
});

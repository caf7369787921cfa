/**
 * The JavaScript CRC32C of short ranges must give the native library's answer for every length
 * and every split, and a batch's checksum must not depend on which of the two computes it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { crc32c } from "@node-rs/crc32";
import fc from "fast-check";
import { batchCrc } from "../../src/format/crc.js";
import { ATTRIBUTES_AT, CRC_AT, KEY_SIZE_AT, OFFSET_AT } from "../../src/format/layout.js";
import { CRC32C_START, shortCrc32cEnd, shortCrc32cUpdate } from "../../src/format/short-crc32c.js";

test("short CRC32C equals the native CRC32C for every length up to 600 bytes", () => {
  const bytes = Buffer.alloc(600);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 151 + 7) & 0xff;
  for (let n = 0; n <= bytes.length; n++) {
    const from = n % 13;
    const to = Math.min(bytes.length, from + n);
    const got = shortCrc32cEnd(shortCrc32cUpdate(bytes, from, to, CRC32C_START));
    assert.equal(got, crc32c(bytes.subarray(from, to)), `length ${to - from} at ${from}`);
  }
});

test("short CRC32C chained over any split equals the native CRC32C of the whole", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), fc.nat(), fc.nat(), (bytes, a, b) => {
      const cut1 = bytes.length === 0 ? 0 : a % (bytes.length + 1);
      const cut2 = cut1 + (bytes.length - cut1 === 0 ? 0 : b % (bytes.length - cut1 + 1));
      let crc = shortCrc32cUpdate(bytes, 0, cut1, CRC32C_START);
      crc = shortCrc32cUpdate(bytes, cut1, cut2, crc);
      crc = shortCrc32cUpdate(bytes, cut2, bytes.length, crc);
      assert.equal(shortCrc32cEnd(crc), crc32c(Buffer.from(bytes)));
    }),
  );
});

test("a batch's CRC is the same on both sides of the short-batch threshold", () => {
  // The covered ranges, concatenated, checksummed natively: what batchCrc means for any size.
  const expected = (buf: Buffer, at: number, end: number): number =>
    crc32c(
      Buffer.concat([
        buf.subarray(at, at + OFFSET_AT),
        buf.subarray(at + KEY_SIZE_AT, at + CRC_AT),
        buf.subarray(at + ATTRIBUTES_AT, end),
      ]),
    );
  const buf = Buffer.alloc(700);
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 31 + 3) & 0xff;
  for (let size = ATTRIBUTES_AT + 1; size <= 600; size++) {
    const at = size % 7;
    assert.equal(batchCrc(buf, at, at + size), expected(buf, at, at + size), `batch of ${size} bytes`);
  }
});

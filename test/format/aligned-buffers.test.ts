import assert from "node:assert/strict";
import { test } from "node:test";
import { aliveAlignedBuffers, isAlignedBuffer, newAlignedBuffer } from "../../src/format/aligned-buffers.js";

test("aligned buffers are page-aligned, bounded in number, and a request with spare k leaves k to be made", () => {
  const held: Buffer[] = [];
  for (;;) {
    const buf = newAlignedBuffer(5000, 8);
    if (buf === null) break;
    assert.ok(isAlignedBuffer(buf) && buf.length >= 5000);
    held.push(buf);
  }
  assert.ok(held.length > 0);
  const atSpare = aliveAlignedBuffers();
  let more = 0;
  for (;;) {
    const buf = newAlignedBuffer(5000);
    if (buf === null) break;
    held.push(buf);
    more++;
  }
  assert.equal(more, 8, "the last 8 are made only without a spare");
  assert.equal(aliveAlignedBuffers(), atSpare + 8);
  assert.equal(newAlignedBuffer(5000, 0), null);
});

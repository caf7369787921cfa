import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { OutputBuffer } from "../../src/cli/output-buffer.js";

/** A sink that takes one write at a time and asks the writer to wait after each. */
function slowSink(): { sink: Writable; received: Buffer[] } {
  const received: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _enc, done) {
      received.push(Buffer.from(chunk));
      setImmediate(done);
    },
  });
  return { sink, received };
}

test("bytes, single bytes and text arrive in order, across flushes and chunk growth", async () => {
  const { sink, received } = slowSink();
  const out = new OutputBuffer(sink);
  const expected: Buffer[] = [];
  const big = Buffer.alloc(100_000, 0x62);
  for (let i = 0; i < 50; i++) {
    const piece = Buffer.from(`xx${i}-value-${"z".repeat(i)}yy`);
    out.bytes(piece, 2, piece.length - 2);
    out.byte(0x0a);
    expected.push(piece.subarray(2, piece.length - 2), Buffer.from("\n"));
    if (i % 7 === 0) {
      out.text(`é${i}`);
      expected.push(Buffer.from(`é${i}`));
    }
    if (i === 20) {
      out.bytes(big, 0, big.length); // larger than a chunk: the chunk grows
      expected.push(big);
    }
    if (out.full || i % 10 === 0) await out.flush();
  }
  await out.flush();
  assert.equal(out.pendingBytes, 0);
  assert.deepEqual(Buffer.concat(received), Buffer.concat(expected));
});

test("flush resolves only once the stream has drained", async () => {
  const { sink } = slowSink();
  const out = new OutputBuffer(sink);
  out.text("a".repeat(1000));
  await out.flush();
  // Without waiting for 'drain' the 1000 bytes would still be in the sink's buffer here.
  assert.equal(sink.writableLength, 0);
});

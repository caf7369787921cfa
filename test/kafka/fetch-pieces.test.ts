/**
 * A large Kafka fetch response goes out as pieces (kafka/protocol/frame.ts encodeResponsePieces):
 * the same bytes as the one-buffer encoding, with the stored record bytes referenced, not copied.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import * as k from "../../src/kafka/protocol/index.js";
import { JOIN_MAX_BYTES } from "../../src/net/socket-writes.js";

function partition(index: number, records: k.FetchPartitionResponse["records"]): k.FetchPartitionResponse {
  return {
    partitionIndex: index,
    errorCode: 0,
    highWatermark: 1000 + index,
    lastStableOffset: 1000 + index,
    logStartOffset: 0,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records,
  };
}

function response(topics: k.FetchResponse["topics"]): k.FetchResponse {
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, topics };
}

/** Whether `piece` is `b` itself or a view of the same memory (not a copy). */
function sameMemory(piece: Buffer, b: Uint8Array): boolean {
  return piece.buffer === b.buffer && piece.byteOffset === b.byteOffset && piece.length === b.length;
}

function filled(bytes: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

test("kafka fetch pieces: a large response is the one-buffer bytes, its records referenced not copied", () => {
  // Views into one read buffer, as stored Kafka batches are served past their envelopes.
  const read = filled(300_000, 7);
  const batches = [read.subarray(61, 100_000), read.subarray(100_061, 200_000)];
  const single = read.subarray(200_061, 260_000);
  const res = response([
    { topic: "a", partitions: [partition(0, batches), partition(1, Buffer.alloc(0)), partition(2, null)] },
    { topic: "b", partitions: [partition(0, single)] },
  ]);
  for (const version of [4, 5, 7, 11]) {
    const pieces = k.encodeFetchResponsePieces(9, version, res);
    assert.ok(Array.isArray(pieces), `v${version}: pieces past ${JOIN_MAX_BYTES} bytes`);
    assert.deepEqual(Buffer.concat(pieces), k.encodeFetchResponse(9, version, res), `v${version}`);
    for (const b of [...batches, single]) {
      assert.ok(
        pieces.some((p) => sameMemory(p, b)),
        `v${version}: a ${b.length}-byte record set is sent from where it was read`,
      );
    }
    // Everything else (the headers) is small: written, not a copy of records.
    const copied = pieces.filter((p) => p.buffer !== read.buffer).reduce((n, p) => n + p.length, 0);
    assert.ok(copied < 512, `v${version}: ${copied} bytes of headers`);
  }
});

test("kafka fetch pieces: a response up to JOIN_MAX_BYTES is one buffer", () => {
  const res = response([{ topic: "t", partitions: [partition(0, [filled(1000, 1), filled(2000, 2)])] }]);
  const one = k.encodeFetchResponsePieces(3, 11, res);
  assert.ok(Buffer.isBuffer(one));
  assert.deepEqual(one, k.encodeFetchResponse(3, 11, res));
});

test("kafka fetch pieces: any shape encodes to the same bytes as one buffer", () => {
  const records = fc.oneof(
    fc.constant(null),
    fc.integer({ min: 0, max: 40_000 }).map((n) => filled(n, n)),
    fc.array(
      fc.integer({ min: 0, max: 20_000 }).map((n) => filled(n, n + 1)),
      { maxLength: 4 },
    ),
  );
  const topic = fc.record({
    topic: fc.string({ minLength: 1, maxLength: 20 }),
    partitions: fc.array(records, { maxLength: 4 }).map((rs) => rs.map((r, i) => partition(i, r))),
  });
  fc.assert(
    fc.property(fc.array(topic, { maxLength: 3 }), fc.constantFrom(4, 5, 7, 11), (topics, version) => {
      const res = response(topics);
      const pieces = k.encodeFetchResponsePieces(1, version, res);
      const joined = Buffer.isBuffer(pieces) ? pieces : Buffer.concat(pieces);
      assert.deepEqual(joined, k.encodeFetchResponse(1, version, res));
    }),
    { numRuns: 200 },
  );
});

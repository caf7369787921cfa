/** Every request and response survives encode -> frame parser -> decode, for arbitrary field values. */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import * as net from "../../src/net/index.js";
import * as p from "../../src/protocol/index.js";

/** Encoded message -> the frame the parser yields for it. */
function frameOf(message: Buffer): Buffer {
  const parser = new net.FrameParser({ maxFrameBytes: message.length });
  parser.push(message);
  const frame = parser.next();
  assert.ok(frame);
  assert.equal(parser.next(), null);
  return frame;
}

/** Plain objects, as the decoders build (fast-check records have no prototype by default). */
function rec<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> {
  return fc.record(model, { noNullPrototype: true });
}

const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const str = fc.string({ unit: "binary", maxLength: 40 });
const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
const configs = fc
  .dictionary(str, str, { maxKeys: 6 })
  .map((o) => Object.assign(Object.create(null) as Record<string, string>, o));
const acks = fc.constantFrom(0, 1, 2) as fc.Arbitrary<p.AcksValue>;
const spec = fc.constantFrom(0, 1, 2) as fc.Arbitrary<p.OffsetSpecValue>;

function requestRoundTrip<T>(
  apiKey: number,
  arb: fc.Arbitrary<T>,
  encode: (id: number, v: T) => Buffer,
  decode: (frame: Buffer) => T,
): void {
  test(`round trip: ${p.apiName(apiKey)} request`, () => {
    fc.assert(
      fc.property(u32, arb, (id, value) => {
        const frame = frameOf(encode(id, value));
        assert.equal(p.requestApiKey(frame), apiKey);
        assert.equal(p.requestApiVersion(frame), p.API_VERSION[apiKey as p.ApiKeyNumber]);
        assert.equal(p.requestCorrelationId(frame), id);
        assert.deepEqual(decode(frame), value);
      }),
      { numRuns: 100 },
    );
  });
}

function responseRoundTrip<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  encode: (id: number, v: T) => Buffer,
  decode: (frame: Buffer) => T,
): void {
  test(`round trip: ${name} response`, () => {
    fc.assert(
      fc.property(u32, arb, (id, value) => {
        const frame = frameOf(encode(id, value));
        assert.equal(p.responseCorrelationId(frame), id);
        assert.equal(p.responseErrorCode(frame), 0);
        assert.deepEqual(decode(frame), value);
      }),
      { numRuns: 100 },
    );
  });
}

requestRoundTrip(
  p.ApiKey.HANDSHAKE,
  rec({ minVersion: u16, maxVersion: u16, clientId: str }),
  p.encodeHandshakeRequest,
  p.decodeHandshakeRequest,
);
responseRoundTrip(
  "Handshake",
  rec({ version: u16, maxFrameBytes: u32, maxBatchBytes: u32 }),
  p.encodeHandshakeResponse,
  p.decodeHandshakeResponse,
);
requestRoundTrip(
  p.ApiKey.CREATE_TOPIC,
  rec({ topic: str, partitions: u32, configs }),
  p.encodeCreateTopicRequest,
  p.decodeCreateTopicRequest,
);
requestRoundTrip(
  p.ApiKey.DELETE_TOPIC,
  rec({ topic: str }),
  p.encodeDeleteTopicRequest,
  p.decodeDeleteTopicRequest,
);
requestRoundTrip(
  p.ApiKey.LIST_TOPICS,
  fc.constant(undefined),
  (id) => p.encodeListTopicsRequest(id),
  p.decodeListTopicsRequest,
);
responseRoundTrip(
  "ListTopics",
  rec({ topics: fc.array(str, { maxLength: 20 }) }),
  p.encodeListTopicsResponse,
  p.decodeListTopicsResponse,
);
requestRoundTrip(
  p.ApiKey.DESCRIBE_TOPIC,
  rec({ topic: str }),
  p.encodeDescribeTopicRequest,
  p.decodeDescribeTopicRequest,
);
responseRoundTrip(
  "DescribeTopic",
  rec({
    topic: str,
    partitions: fc.array(rec({ partition: u32, logStartOffset: u64, highWatermark: u64 }), {
      maxLength: 10,
    }),
    configs,
  }),
  p.encodeDescribeTopicResponse,
  p.decodeDescribeTopicResponse,
);
requestRoundTrip(
  p.ApiKey.PRODUCE,
  rec({ topic: str, partition: u32, acks, timeoutMs: u32, records: bytes }),
  p.encodeProduceRequest,
  p.decodeProduceRequest,
);
responseRoundTrip(
  "Produce",
  rec({ baseOffset: u64, lastOffset: u64 }),
  p.encodeProduceResponse,
  p.decodeProduceResponse,
);
requestRoundTrip(
  p.ApiKey.FETCH,
  rec({ topic: str, partition: u32, offset: u64, maxBytes: u32, maxWaitMs: u32, minBytes: u32 }),
  p.encodeFetchRequest,
  p.decodeFetchRequest,
);
responseRoundTrip(
  "Fetch",
  rec({ highWatermark: u64, logStartOffset: u64, records: bytes }),
  p.encodeFetchResponse,
  p.decodeFetchResponse,
);
requestRoundTrip(
  p.ApiKey.LIST_OFFSETS,
  rec({ topic: str, partition: u32, spec, timestampMs: u64 }),
  p.encodeListOffsetsRequest,
  p.decodeListOffsetsRequest,
);
responseRoundTrip(
  "ListOffsets",
  rec({ found: fc.boolean(), offset: u64 }),
  p.encodeListOffsetsResponse,
  p.decodeListOffsetsResponse,
);
requestRoundTrip(
  p.ApiKey.ALTER_TOPIC,
  rec({ topic: str, configs }),
  p.encodeAlterTopicRequest,
  p.decodeAlterTopicRequest,
);
responseRoundTrip("empty", fc.constant(undefined), (id) => p.encodeEmptyResponse(id), p.decodeEmptyResponse);

test("round trip: error responses", () => {
  fc.assert(
    fc.property(u32, fc.integer({ min: 1, max: 0xffff }), str, (id, code, message) => {
      const frame = frameOf(p.encodeErrorResponse(id, code, message));
      assert.equal(p.responseCorrelationId(frame), id);
      const err = p.decodeErrorResponse(frame);
      assert.equal(err.code, code);
      assert.equal(err.message, message);
    }),
    { numRuns: 100 },
  );
});

test("header-only encoders agree with the whole-message encoders", () => {
  fc.assert(
    fc.property(
      u32,
      str,
      u32,
      acks,
      u32,
      u64,
      u64,
      bytes,
      (id, topic, partition, a, timeoutMs, hw, start, records) => {
        assert.deepEqual(
          Buffer.concat([
            p.encodeProduceRequestHeader(id, topic, partition, a, timeoutMs, records.length),
            records,
          ]),
          p.encodeProduceRequest(id, { topic, partition, acks: a, timeoutMs, records }),
        );
        assert.deepEqual(
          Buffer.concat([p.encodeFetchResponseHeader(id, hw, start, records.length), records]),
          p.encodeFetchResponse(id, { highWatermark: hw, logStartOffset: start, records }),
        );
      },
    ),
    { numRuns: 100 },
  );
});

test("round trip: PRODUCE version 2 request and response", () => {
  const entry = rec({ partition: u32, records: bytes });
  fc.assert(
    fc.property(
      u32,
      rec({ topic: str, acks, timeoutMs: u32, partitions: fc.array(entry, { minLength: 1, maxLength: 20 }) }),
      (id, value) => {
        const frame = frameOf(p.encodeMultiProduceRequest(id, value));
        assert.equal(p.requestApiKey(frame), p.ApiKey.PRODUCE);
        assert.equal(p.requestApiVersion(frame), p.PRODUCE_MULTI_VERSION);
        assert.equal(p.requestCorrelationId(frame), id);
        assert.deepEqual(p.decodeMultiProduceRequest(frame), value);
        const size = p.multiProduceRequestBytes(
          value.topic,
          value.partitions.length,
          value.partitions.reduce((n, e) => n + e.records.length, 0),
        );
        assert.equal(frame.length + 4, size);
      },
    ),
    { numRuns: 100 },
  );
  const offset = fc.oneof(fc.constant(-1), u64);
  const result = rec({
    partition: u32,
    errorCode: u16,
    baseOffset: offset,
    lastOffset: offset,
    message: str,
  });
  fc.assert(
    fc.property(u32, fc.array(result, { maxLength: 20 }), (id, partitions) => {
      const frame = frameOf(p.encodeMultiProduceResponse(id, { partitions }));
      assert.equal(p.responseCorrelationId(frame), id);
      assert.deepEqual(p.decodeMultiProduceResponse(frame), { partitions });
    }),
    { numRuns: 100 },
  );
  // The all-stored answer written from arrays is the same bytes as the one written from results.
  const stored = rec({
    partition: u32,
    base: fc.integer({ min: 0, max: 2 ** 52 }),
    count: fc.integer({ min: 1, max: 5000 }),
  });
  fc.assert(
    fc.property(u32, fc.array(stored, { minLength: 1, maxLength: 20 }), (id, parts) => {
      const fromArrays = p.encodeStoredProduceResponse(
        id,
        Uint32Array.from(parts, (x) => x.partition),
        Uint32Array.from(parts, (x) => x.count),
        parts.map((x) => x.base),
      );
      const results = parts.map((x) => ({
        partition: x.partition,
        errorCode: 0,
        baseOffset: x.base,
        lastOffset: x.base + x.count - 1,
        message: "",
      }));
      assert.deepEqual(fromArrays, p.encodeMultiProduceResponse(id, { partitions: results }));
    }),
    { numRuns: 100 },
  );
});

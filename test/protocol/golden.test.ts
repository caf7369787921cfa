/**
 * Every golden fixture decodes to the expected message and re-encodes byte for byte, and the docs
 * show exactly these fixtures.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { BatchBuilder, ConchError, ErrorCode, stampBaseOffset } from "../../src/format/index.js";
import * as net from "../../src/net/index.js";
import * as p from "../../src/protocol/index.js";
import { GROUP_FIXTURE_TEXT, groupCases } from "../groups/protocol-fixtures.js";
import { FIXTURE_TEXT, parseFixtures } from "./fixtures.js";

const fixtures = parseFixtures(FIXTURE_TEXT + GROUP_FIXTURE_TEXT);

function fixture(name: string): Buffer {
  const b = fixtures.get(name);
  assert.ok(b, `fixture ${name} exists`);
  return b;
}

const builder = new BatchBuilder();
builder.add("hi", "k", 1_700_000_000_000);
const batch = Buffer.from(builder.finish());
const storedBatch = Buffer.from(batch);
stampBaseOffset(storedBatch, 0, 42);
const partitionedBuilder = new BatchBuilder({ partitioned: true });
partitionedBuilder.addTo(0, "hi", "k", 1_700_000_000_000);
partitionedBuilder.addTo(3, "hi", "k", 1_700_000_000_000);
const partitionedBatch = Buffer.from(partitionedBuilder.finish());

interface Case {
  apiKey?: number;
  apiVersion?: number;
  correlationId: number;
  value: unknown;
  encode(correlationId: number, value: never): Buffer;
  decode(frame: Buffer): unknown;
}

const configs = (o: Record<string, string>): Record<string, string> => Object.assign(Object.create(null), o);

const cases: Record<string, Case> = {
  "sasl-handshake-request": {
    apiKey: p.ApiKey.SASL_HANDSHAKE,
    correlationId: 40,
    value: { mechanism: "SCRAM-SHA-256" },
    encode: p.encodeSaslHandshakeRequest,
    decode: p.decodeSaslHandshakeRequest,
  },
  "sasl-handshake-response": {
    correlationId: 40,
    value: { mechanisms: ["SCRAM-SHA-256", "SCRAM-SHA-512"] },
    encode: p.encodeSaslHandshakeResponse,
    decode: p.decodeSaslHandshakeResponse,
  },
  "sasl-authenticate-request": {
    apiKey: p.ApiKey.SASL_AUTHENTICATE,
    correlationId: 41,
    value: Buffer.from("n,,n=alice,r=abc"),
    encode: p.encodeSaslAuthenticateRequest,
    decode: p.decodeSaslAuthenticateRequest,
  },
  "sasl-authenticate-response": {
    correlationId: 41,
    value: Buffer.from("v=c2ln"),
    encode: p.encodeSaslAuthenticateResponse,
    decode: p.decodeSaslAuthenticateResponse,
  },
  "handshake-request": {
    apiKey: p.ApiKey.HANDSHAKE,
    correlationId: 1,
    value: { minVersion: 1, maxVersion: 1, clientId: "conch-js" },
    encode: p.encodeHandshakeRequest,
    decode: p.decodeHandshakeRequest,
  },
  "handshake-response": {
    correlationId: 1,
    value: { version: 1, maxFrameBytes: 4_259_840, maxBatchBytes: 4_194_304 },
    encode: p.encodeHandshakeResponse,
    decode: p.decodeHandshakeResponse,
  },
  "create-topic-request": {
    apiKey: p.ApiKey.CREATE_TOPIC,
    correlationId: 2,
    value: { topic: "orders", partitions: 3, configs: configs({ "retention.ms": "86400000" }) },
    encode: p.encodeCreateTopicRequest,
    decode: p.decodeCreateTopicRequest,
  },
  "create-topic-response": {
    correlationId: 2,
    value: undefined,
    encode: (id: number) => p.encodeCreateTopicResponse(id),
    decode: p.decodeCreateTopicResponse,
  },
  "delete-topic-request": {
    apiKey: p.ApiKey.DELETE_TOPIC,
    correlationId: 3,
    value: { topic: "orders" },
    encode: p.encodeDeleteTopicRequest,
    decode: p.decodeDeleteTopicRequest,
  },
  "delete-topic-response": {
    correlationId: 3,
    value: undefined,
    encode: (id: number) => p.encodeDeleteTopicResponse(id),
    decode: p.decodeDeleteTopicResponse,
  },
  "list-topics-request": {
    apiKey: p.ApiKey.LIST_TOPICS,
    correlationId: 4,
    value: undefined,
    encode: (id: number) => p.encodeListTopicsRequest(id),
    decode: p.decodeListTopicsRequest,
  },
  "list-topics-response": {
    correlationId: 4,
    value: { topics: ["events", "orders"] },
    encode: p.encodeListTopicsResponse,
    decode: p.decodeListTopicsResponse,
  },
  "metadata-request": {
    apiKey: p.ApiKey.METADATA,
    correlationId: 42,
    value: ["t"],
    encode: p.encodeMetadataRequest,
    decode: p.decodeMetadataRequest,
  },
  "metadata-response": {
    correlationId: 42,
    value: {
      brokerId: 2,
      controllerId: -1,
      brokers: [{ id: 2, host: "h", port: 7420 }],
      topics: [
        {
          name: "t",
          errorCode: 0,
          partitions: [{ partition: 0, leaderId: -1, leaderEpoch: 3, replicas: [2], isr: [] }],
        },
      ],
    },
    encode: p.encodeMetadataResponse,
    decode: p.decodeMetadataResponse,
  },
  "init-producer-id-request": {
    apiKey: p.ApiKey.INIT_PRODUCER_ID,
    correlationId: 40,
    value: undefined,
    encode: (id: number) => p.encodeInitProducerIdRequest(id),
    decode: p.decodeInitProducerIdRequest,
  },
  "init-producer-id-response": {
    correlationId: 40,
    value: { producerId: 7, producerEpoch: 0 },
    encode: p.encodeInitProducerIdResponse,
    decode: p.decodeInitProducerIdResponse,
  },
  "describe-topic-request": {
    apiKey: p.ApiKey.DESCRIBE_TOPIC,
    correlationId: 5,
    value: { topic: "orders" },
    encode: p.encodeDescribeTopicRequest,
    decode: p.decodeDescribeTopicRequest,
  },
  "describe-topic-response": {
    correlationId: 5,
    value: {
      topic: "orders",
      partitions: [
        { partition: 0, logStartOffset: 0, highWatermark: 43 },
        { partition: 1, logStartOffset: 10, highWatermark: 17 },
      ],
      configs: configs({ flush: "sync" }),
    },
    encode: p.encodeDescribeTopicResponse,
    decode: p.decodeDescribeTopicResponse,
  },
  "describe-topic-v2-request": {
    apiKey: p.ApiKey.DESCRIBE_TOPIC,
    apiVersion: 2,
    correlationId: 5,
    value: { topic: "orders" },
    encode: p.encodeDescribeTopicRequestV2,
    decode: p.decodeDescribeTopicRequest,
  },
  "describe-topic-v2-response": {
    correlationId: 5,
    value: {
      topic: "orders",
      partitions: [
        {
          partition: 0,
          logStartOffset: 0,
          highWatermark: 43,
          quarantined: [
            {
              firstOffset: 20,
              lastOffset: 22,
              segment: "00000000000000000000.wal",
              reason: "batch CRC32C mismatch",
            },
          ],
        },
        { partition: 1, logStartOffset: 10, highWatermark: 17, quarantined: [] },
      ],
      configs: configs({ flush: "sync" }),
    },
    encode: p.encodeDescribeTopicResponseV2,
    decode: p.decodeDescribeTopicResponseV2,
  },
  "describe-topic-v3-request": {
    apiKey: p.ApiKey.DESCRIBE_TOPIC,
    apiVersion: 3,
    correlationId: 5,
    value: { topic: "orders", scope: p.DescribeScope.CLUSTER },
    encode: p.encodeDescribeTopicRequestV3,
    decode: p.decodeDescribeTopicRequestV3,
  },
  "describe-topic-v3-response": {
    correlationId: 5,
    value: {
      topic: "orders",
      partitions: [
        {
          partition: 0,
          leaderId: 2,
          leaderEpoch: 1,
          replicas: [2, 3],
          isr: [2, 3],
          figuresKnown: true,
          logStartOffset: 0,
          logEndOffset: 45,
          highWatermark: 43,
          sizeBytes: 4096,
          segments: 1,
          quarantined: [],
        },
        {
          partition: 1,
          leaderId: 3,
          leaderEpoch: 0,
          replicas: [3, 1],
          isr: [3],
          figuresKnown: false,
          logStartOffset: p.UNKNOWN_OFFSET,
          highWatermark: p.UNKNOWN_OFFSET,
        },
      ],
      configs: configs({ flush: "sync" }),
    },
    encode: p.encodeDescribeTopicResponseV3,
    decode: p.decodeDescribeTopicResponseV3,
  },
  "produce-request": {
    apiKey: p.ApiKey.PRODUCE,
    correlationId: 6,
    value: { topic: "orders", partition: 0, acks: 1, timeoutMs: 30_000, records: batch },
    encode: p.encodeProduceRequest,
    decode: p.decodeProduceRequest,
  },
  "produce-response": {
    correlationId: 6,
    value: { baseOffset: 42, lastOffset: 42 },
    encode: p.encodeProduceResponse,
    decode: p.decodeProduceResponse,
  },
  "produce-v2-request": {
    apiKey: p.ApiKey.PRODUCE,
    apiVersion: 2,
    correlationId: 8,
    value: {
      topic: "orders",
      acks: 1,
      timeoutMs: 30_000,
      partitions: [
        { partition: 0, records: batch },
        { partition: 3, records: batch },
      ],
    },
    encode: p.encodeMultiProduceRequest,
    decode: p.decodeMultiProduceRequest,
  },
  "produce-v2-response": {
    correlationId: 8,
    value: {
      partitions: [
        { partition: 0, errorCode: 0, baseOffset: 42, lastOffset: 42, message: "" },
        { partition: 3, errorCode: 50, baseOffset: -1, lastOffset: -1, message: "not the leader" },
      ],
    },
    encode: p.encodeMultiProduceResponse,
    decode: p.decodeMultiProduceResponse,
  },
  "produce-v3-request": {
    apiKey: p.ApiKey.PRODUCE,
    apiVersion: 3,
    correlationId: 9,
    value: { topic: "orders", acks: 1, timeoutMs: 30_000, records: partitionedBatch },
    encode: p.encodePartitionedProduceRequest,
    decode: p.decodePartitionedProduceRequest,
  },
  "fetch-request": {
    apiKey: p.ApiKey.FETCH,
    correlationId: 7,
    value: { topic: "orders", partition: 0, offset: 42, maxBytes: 1_048_576, maxWaitMs: 500, minBytes: 1 },
    encode: p.encodeFetchRequest,
    decode: p.decodeFetchRequest,
  },
  "fetch-response": {
    correlationId: 7,
    value: { highWatermark: 43, logStartOffset: 0, records: storedBatch },
    encode: p.encodeFetchResponse,
    decode: p.decodeFetchResponse,
  },
  "list-offsets-request": {
    apiKey: p.ApiKey.LIST_OFFSETS,
    correlationId: 8,
    value: { topic: "orders", partition: 0, spec: 2, timestampMs: 1_700_000_000_000 },
    encode: p.encodeListOffsetsRequest,
    decode: p.decodeListOffsetsRequest,
  },
  "list-offsets-response": {
    correlationId: 8,
    value: { found: true, offset: 42 },
    encode: p.encodeListOffsetsResponse,
    decode: p.decodeListOffsetsResponse,
  },
  "alter-topic-request": {
    apiKey: p.ApiKey.ALTER_TOPIC,
    correlationId: 9,
    value: { topic: "orders", configs: configs({ "retention.ms": "3600000" }) },
    encode: p.encodeAlterTopicRequest,
    decode: p.decodeAlterTopicRequest,
  },
  "alter-topic-response": {
    correlationId: 9,
    value: undefined,
    encode: (id: number) => p.encodeAlterTopicResponse(id),
    decode: p.decodeAlterTopicResponse,
  },
  "create-partitions-request": {
    apiKey: p.ApiKey.CREATE_PARTITIONS,
    correlationId: 12,
    value: { topic: "orders", partitions: 6 },
    encode: p.encodeCreatePartitionsRequest,
    decode: p.decodeCreatePartitionsRequest,
  },
  "create-partitions-response": {
    correlationId: 12,
    value: undefined,
    encode: (id: number) => p.encodeCreatePartitionsResponse(id),
    decode: p.decodeCreatePartitionsResponse,
  },
  "reassign-partitions-request": {
    apiKey: p.ApiKey.REASSIGN_PARTITIONS,
    correlationId: 17,
    value: { moves: [{ topic: "orders", partition: 0, replicas: [4, 2, 3] }] },
    encode: p.encodeReassignPartitionsRequest,
    decode: p.decodeReassignPartitionsRequest,
  },
  "reassign-partitions-response": {
    correlationId: 17,
    value: undefined,
    encode: (id: number) => p.encodeReassignPartitionsResponse(id),
    decode: p.decodeReassignPartitionsResponse,
  },
  "fetch-stream-request": {
    apiKey: p.ApiKey.FETCH_STREAM,
    correlationId: 11,
    value: {
      topic: "orders",
      partition: 0,
      offset: 42,
      maxBytes: 1_048_576,
      maxWaitMs: 500,
      minBytes: 1,
      windowBytes: 2_097_152,
      group: "",
      memberId: "",
      generation: 0,
    },
    encode: p.encodeFetchStreamRequest,
    decode: p.decodeFetchStreamRequest,
  },
  "replica-fetch-request": {
    apiKey: p.ApiKey.REPLICA_FETCH,
    correlationId: 30,
    value: {
      topic: "orders",
      partition: 0,
      replicaId: 2,
      currentLeaderEpoch: 4,
      fetchOffset: 42,
      lastFetchedEpoch: 3,
      maxBytes: 1_048_576,
      maxWaitMs: 500,
      windowBytes: 4_194_304,
    },
    encode: p.encodeReplicaFetchRequest,
    decode: p.decodeReplicaFetchRequest,
  },
  "replica-fetch-response": {
    correlationId: 30,
    value: {
      leaderEpoch: 4,
      highWatermark: 42,
      logStartOffset: 0,
      diverging: false,
      divergingEpoch: p.NO_EPOCH,
      divergingEndOffset: 0,
      epochs: [{ epoch: 4, startOffset: 40 }],
      records: storedBatch,
    },
    encode: p.encodeReplicaFetchResponse,
    decode: p.decodeReplicaFetchResponse,
  },
  "replica-fetch-diverging-response": {
    correlationId: 30,
    value: {
      leaderEpoch: 4,
      highWatermark: 40,
      logStartOffset: 0,
      diverging: true,
      divergingEpoch: 3,
      divergingEndOffset: 40,
      epochs: [],
      records: Buffer.alloc(0),
    },
    encode: p.encodeReplicaFetchResponse,
    decode: p.decodeReplicaFetchResponse,
  },
  "stream-credit-request": {
    apiKey: p.ApiKey.STREAM_CREDIT,
    correlationId: 12,
    value: { streamId: 11, bytes: 1_048_576 },
    encode: p.encodeStreamCredit,
    decode: p.decodeStreamCredit,
  },
  "stream-cancel-request": {
    apiKey: p.ApiKey.STREAM_CANCEL,
    correlationId: 13,
    value: 11,
    encode: p.encodeStreamCancel,
    decode: p.decodeStreamCancel,
  },
  ...groupCases,
};

test("there is a golden fixture for every message, and a case for every fixture", () => {
  assert.deepEqual([...fixtures.keys()].sort(), [...Object.keys(cases), "error-response"].sort());
  const requests = Object.values(cases).filter((c) => c.apiKey !== undefined);
  assert.deepEqual([...new Set(requests.map((c) => c.apiKey))].sort(), Object.values(p.ApiKey).sort());
});

for (const [name, c] of Object.entries(cases)) {
  test(`golden ${name}: decodes to the expected message and re-encodes byte for byte`, () => {
    const bytes = fixture(name);
    const parser = new net.FrameParser({ maxFrameBytes: 1024 });
    parser.push(bytes);
    const frame = parser.next();
    assert.ok(frame);
    assert.equal(parser.next(), null);
    if (c.apiKey !== undefined) {
      assert.equal(p.requestApiKey(frame), c.apiKey);
      assert.equal(p.requestApiVersion(frame), c.apiVersion ?? 1);
      assert.equal(p.requestCorrelationId(frame), c.correlationId);
    } else {
      assert.equal(p.responseCorrelationId(frame), c.correlationId);
      assert.equal(p.responseErrorCode(frame), 0);
      assert.equal(p.responseError(frame), null);
    }
    const decoded = c.decode(frame);
    assert.deepEqual(decoded, c.value);
    assert.deepEqual(c.encode(c.correlationId, decoded as never), bytes);
    assert.deepEqual(c.encode(c.correlationId, c.value as never), bytes);
  });
}

test("golden produce-request: records decode as a view of the frame, and the header can be sent apart", () => {
  const bytes = fixture("produce-request");
  const frame = bytes.subarray(4);
  const req = p.decodeProduceRequest(frame);
  assert.equal(req.records.buffer, frame.buffer);
  assert.equal(req.records.byteOffset, frame.byteOffset + frame.length - batch.length);
  const header = p.encodeProduceRequestHeader(6, "orders", 0, p.Acks.LEADER, 30_000, batch.length);
  assert.deepEqual(Buffer.concat([header, batch]), bytes);
});

test("golden fetch-response: header plus stored records, records decoded as a view", () => {
  const bytes = fixture("fetch-response");
  const header = p.encodeFetchResponseHeader(7, 43, 0, storedBatch.length);
  assert.equal(header.length, 30);
  assert.deepEqual(Buffer.concat([header, storedBatch]), bytes);
  const frame = bytes.subarray(4);
  const res = p.decodeFetchResponse(frame);
  assert.equal(res.records.buffer, frame.buffer);
  assert.equal(res.records.byteOffset, frame.byteOffset + 26);
});

test("golden error-response: decodes to the ConchError it carries, and re-encodes", () => {
  const bytes = fixture("error-response");
  const frame = bytes.subarray(4);
  assert.equal(p.responseCorrelationId(frame), 10);
  const err = p.decodeErrorResponse(frame);
  assert.ok(err instanceof ConchError);
  assert.equal(err.code, ErrorCode.UNKNOWN_TOPIC);
  assert.equal(err.codeName, "UNKNOWN_TOPIC");
  assert.equal(err.message, "unknown topic orders");
  assert.deepEqual(p.responseError(frame), err);
  assert.deepEqual(p.encodeErrorResponse(10, ErrorCode.UNKNOWN_TOPIC, "unknown topic orders"), bytes);
  // Every response decoder throws the carried error instead of reading the message as a body.
  for (const decode of [
    p.decodeProduceResponse,
    p.decodeFetchResponse,
    p.decodeHandshakeResponse,
    p.decodeEmptyResponse,
  ]) {
    assert.throws(
      () => decode(frame),
      (e: unknown) => e instanceof ConchError && e.code === ErrorCode.UNKNOWN_TOPIC,
    );
  }
});

test("docs/protocol.md lists exactly these golden fixtures", () => {
  const docs = readFileSync(new URL("../../../docs/protocol.md", import.meta.url), "utf8");
  const inDocs = parseFixtures(docs);
  assert.deepEqual([...inDocs.keys()].sort(), [...fixtures.keys()].sort());
  for (const [name, bytes] of fixtures) assert.deepEqual(inDocs.get(name), bytes, name);
});

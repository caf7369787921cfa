/**
 * Kafka framing and the handshake: headers of every version, the version table, and ApiVersions
 * answered and refused in the shapes each client reads.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import * as k from "../../src/kafka/protocol/index.js";
import * as apiVersions from "./fixtures/api-versions.js";
import { parseKafkaFixtures } from "./fixtures/fixture-format.js";

const refusedAs = (code: number) => (e: unknown) => e instanceof ConchError && e.code === code;

test("kafka frame: librdkafka's flexible ApiVersions v3 header and body decode, tagged fields skipped", () => {
  const frame = parseKafkaFixtures(apiVersions.TEXT).get("api-versions-v3-librdkafka-request");
  assert.ok(frame);
  const h = k.decodeRequestHeader(frame);
  assert.deepEqual(
    [h.apiKey, h.apiVersion, h.correlationId, h.clientId, h.supported],
    [18, 3, 1, "rdkafka", true],
  );
  assert.deepEqual(k.decodeApiVersionsRequest(h), {
    clientSoftwareName: "confluent-kafka-python",
    clientSoftwareVersion: "1.7.0-rdkafka-2.0.2",
  });
});

test("kafka frame: a size field that disagrees with the frame is malformed", () => {
  const frame = Buffer.from("0000000b0012000000000001ffff", "hex");
  assert.throws(() => k.decodeRequestHeader(frame), refusedAs(ErrorCode.MALFORMED_REQUEST));
  assert.throws(
    () => k.decodeRequestHeader(Buffer.from("000000", "hex")),
    refusedAs(ErrorCode.MALFORMED_REQUEST),
  );
});

test("kafka frame: an unknown API or version still yields its header, then UNSUPPORTED_VERSION", () => {
  for (const [apiKey, version] of [
    [18, 4],
    [0, 8],
    [0, 9],
    [1, 12],
    [17, 2],
    [999, 0],
  ] as const) {
    const frame = Buffer.from("0000000a00000000000000070000", "hex");
    frame.writeInt16BE(apiKey, 4);
    frame.writeInt16BE(version, 6);
    const h = k.decodeRequestHeader(frame);
    assert.equal(h.correlationId, 7);
    assert.equal(h.clientId, "");
    assert.equal(h.supported, false);
    assert.throws(() => k.decodeKafkaRequest(frame), refusedAs(ErrorCode.UNSUPPORTED_VERSION));
  }
});

test("kafka frame: only ApiVersions 3 is flexible, and its response header stays v0", () => {
  for (const api of k.SUPPORTED_APIS) {
    for (let v = api.min; v <= api.max; v++) {
      const flexible = api.apiKey === k.ApiKey.API_VERSIONS && v === 3;
      assert.equal(k.isFlexible(api.apiKey, v), flexible, `${api.name} v${v}`);
      assert.equal(k.requestHeaderVersion(api.apiKey, v), flexible ? 2 : 1);
      assert.equal(k.responseHeaderVersion(api.apiKey, v), 0);
    }
  }
  assert.equal(k.responseHeaderVersion(k.ApiKey.METADATA, 9), 1);
});

test("kafka frame: ApiVersions v3 is answered with compact arrays and tagged fields, in header v0", () => {
  const res = k.encodeApiVersions(5, 3);
  const r = new k.KafkaReader(res);
  assert.equal(r.int32(), res.length - 4);
  assert.equal(r.int32(), 5); // correlation id, then the body at once: header v0
  assert.equal(r.int16(), k.KafkaErrorCode.NONE);
  const n = r.compactArrayCount(7);
  assert.equal(n, k.SUPPORTED_APIS.length);
  for (const api of k.SUPPORTED_APIS) {
    assert.deepEqual([r.int16(), r.int16(), r.int16()], [api.apiKey, api.min, api.max]);
    r.skipTaggedFields();
  }
  assert.equal(r.int32(), 0);
  r.skipTaggedFields();
  r.done();
});

test("kafka frame: a too-new ApiVersions is refused with error 35 and our ranges in a v0 body", () => {
  const res = k.encodeApiVersionsRefusal(9);
  const r = new k.KafkaReader(res, 8);
  assert.equal(r.int16(), k.KafkaErrorCode.UNSUPPORTED_VERSION);
  const n = r.arrayCount(6);
  assert.equal(n, k.SUPPORTED_APIS.length);
  r.skip(n * 6);
  r.done();
  assert.equal(res.readInt32BE(4), 9);
});

test("kafka frame: the error code table names its codes", () => {
  assert.equal(k.kafkaErrorName(35), "UNSUPPORTED_VERSION");
  assert.equal(k.kafkaErrorName(3), "UNKNOWN_TOPIC_OR_PARTITION");
  assert.equal(k.kafkaErrorName(12345), "KAFKA_ERROR_12345");
  const numbers = Object.values(k.KafkaErrorCode);
  assert.equal(new Set(numbers).size, numbers.length, "no number twice");
});

test("kafka frame: the version table in docs/kafka.md is the one ApiVersions advertises", () => {
  const doc = readFileSync(new URL("../../../docs/kafka.md", import.meta.url), "utf8");
  const rows = [...doc.matchAll(/^\| (\w+) \| (\d+) \| (\d+)-(\d+) \|/gm)].map((m) => [
    m[1],
    +m[2]!,
    +m[3]!,
    +m[4]!,
  ]);
  assert.deepEqual(
    rows,
    k.SUPPORTED_APIS.map((a) => [a.name, a.apiKey, a.min, a.max]),
  );
});

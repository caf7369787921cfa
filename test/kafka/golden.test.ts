/**
 * The Kafka golden fixtures (test/kafka/fixtures/): every request real clients sent decodes to the
 * expected values, and every response (librdkafka's mock cluster's, or where it lacks the API,
 * Conch's own answer that the client read) is re-encoded by Conch byte for byte from its values.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import * as k from "../../src/kafka/protocol/index.js";
import { parseKafkaFixtures, plain, revive } from "./fixtures/fixture-format.js";
import { FIXTURE_MODULES } from "./fixtures/index.js";

type Encoder = (correlationId: number, version: number, value: never) => Buffer;

const RESPONSE_ENCODERS = new Map<number, Encoder>([
  [k.ApiKey.PRODUCE, k.encodeProduceResponse],
  [k.ApiKey.FETCH, k.encodeFetchResponse],
  [k.ApiKey.LIST_OFFSETS, k.encodeListOffsetsResponse],
  [k.ApiKey.METADATA, k.encodeMetadataResponse],
  [k.ApiKey.OFFSET_COMMIT, k.encodeOffsetCommitResponse],
  [k.ApiKey.OFFSET_FETCH, k.encodeOffsetFetchResponse],
  [k.ApiKey.FIND_COORDINATOR, k.encodeFindCoordinatorResponse],
  [k.ApiKey.JOIN_GROUP, k.encodeJoinGroupResponse],
  [k.ApiKey.HEARTBEAT, k.encodeHeartbeatResponse],
  [k.ApiKey.LEAVE_GROUP, k.encodeLeaveGroupResponse],
  [k.ApiKey.SYNC_GROUP, k.encodeSyncGroupResponse],
  [k.ApiKey.DESCRIBE_GROUPS, k.encodeDescribeGroupsResponse],
  [k.ApiKey.LIST_GROUPS, k.encodeListGroupsResponse],
  [k.ApiKey.SASL_HANDSHAKE, k.encodeSaslHandshakeResponse],
  [k.ApiKey.API_VERSIONS, k.encodeApiVersionsResponse],
  [k.ApiKey.CREATE_TOPICS, k.encodeCreateTopicsResponse],
  [k.ApiKey.DELETE_TOPICS, k.encodeDeleteTopicsResponse],
  [k.ApiKey.INIT_PRODUCER_ID, k.encodeInitProducerIdResponse],
  [k.ApiKey.DESCRIBE_CONFIGS, k.encodeDescribeConfigsResponse],
  [k.ApiKey.SASL_AUTHENTICATE, k.encodeSaslAuthenticateResponse],
  [k.ApiKey.CREATE_PARTITIONS, k.encodeCreatePartitionsResponse],
]);

let requests = 0;
let responses = 0;
for (const [apiKey, mod] of FIXTURE_MODULES) {
  const frames = parseKafkaFixtures(mod.TEXT);
  for (const [name, frame] of frames) {
    const version = Number(/-v(\d+)-/.exec(name)?.[1]);
    const expected = mod.VALUES[name];
    assert.notEqual(expected, undefined, `${name} has values`);
    if (name.endsWith("-request")) {
      requests++;
      test(`kafka golden: ${name} decodes to its values`, () => {
        const { header, request } = k.decodeKafkaRequest(frame);
        assert.equal(header.apiKey, apiKey);
        assert.equal(header.apiVersion, version);
        assert.deepEqual(plain(request), expected);
      });
    } else {
      responses++;
      test(`kafka golden: ${name} re-encodes byte for byte`, () => {
        const encode = RESPONSE_ENCODERS.get(apiKey);
        assert.ok(encode, `an encoder for api ${apiKey}`);
        const correlationId = frame.readInt32BE(4);
        const ours = encode(correlationId, version, revive(expected) as never);
        assert.equal(ours.toString("hex"), frame.toString("hex"));
      });
    }
  }
}

test("kafka golden: every supported API has a request and a response fixture", () => {
  assert.ok(requests > 40 && responses > 20, `${requests} requests, ${responses} responses`);
  for (const api of k.SUPPORTED_APIS) {
    const mod = FIXTURE_MODULES.get(api.apiKey);
    assert.ok(mod, `fixtures for ${api.name}`);
    assert.ok(
      Object.keys(mod.VALUES).some((n) => n.endsWith("-response")),
      `a ${api.name} response`,
    );
    for (const name of parseKafkaFixtures(mod.TEXT).keys()) {
      const version = Number(/-v(\d+)-/.exec(name)?.[1]);
      assert.ok(
        version >= api.min && version <= api.max,
        `${name} is within ${api.name} ${api.min}-${api.max}`,
      );
    }
  }
});

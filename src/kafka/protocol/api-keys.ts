/**
 * The Kafka APIs Conch's codec decodes, and the versions of each (docs/kafka.md, "Versions"). The
 * ranges are the smallest that serve kcat/librdkafka 2.0.2, confluent-kafka 1.7.0, kafka-python
 * 2.0.2 and kafkajs 2.2.4: a client picks min(its max, our max), so every version in a range must
 * decode and answer correctly, and the ranges are what ApiVersions advertises.
 *
 * One range is wider than what is served: Produce 0-2 are advertised for librdkafka's sake and
 * answered UNSUPPORTED_VERSION per partition (docs/kafka.md, "Versions").
 *
 * Flexible versions (KIP-482: compact strings and arrays, tagged fields, request header v2) begin
 * at a version per API; of the ranges here only ApiVersions 3 is flexible, because librdkafka opens
 * with it. Advertising any other flexible version would make librdkafka use it.
 */

export const ApiKey = {
  PRODUCE: 0,
  FETCH: 1,
  LIST_OFFSETS: 2,
  METADATA: 3,
  OFFSET_COMMIT: 8,
  OFFSET_FETCH: 9,
  FIND_COORDINATOR: 10,
  JOIN_GROUP: 11,
  HEARTBEAT: 12,
  LEAVE_GROUP: 13,
  SYNC_GROUP: 14,
  DESCRIBE_GROUPS: 15,
  LIST_GROUPS: 16,
  SASL_HANDSHAKE: 17,
  API_VERSIONS: 18,
  CREATE_TOPICS: 19,
  DELETE_TOPICS: 20,
  INIT_PRODUCER_ID: 22,
  DESCRIBE_CONFIGS: 32,
  SASL_AUTHENTICATE: 36,
  CREATE_PARTITIONS: 37,
} as const;

export type ApiKeyNumber = (typeof ApiKey)[keyof typeof ApiKey];

export interface VersionRange {
  apiKey: number;
  name: string;
  min: number;
  max: number;
  /** The first flexible version of this API in Kafka (whether or not we support it). */
  firstFlexible: number;
}

/** In ApiKey order, as ApiVersions lists them. */
export const SUPPORTED_APIS: readonly VersionRange[] = [
  // Produce 0-2 (message sets v0/v1) are advertised but answered UNSUPPORTED_VERSION (produce.ts):
  // librdkafka compresses with gzip, snappy or lz4 only when Produce v0 is in the range.
  { apiKey: ApiKey.PRODUCE, name: "Produce", min: 0, max: 7, firstFlexible: 9 },
  { apiKey: ApiKey.FETCH, name: "Fetch", min: 4, max: 11, firstFlexible: 12 },
  { apiKey: ApiKey.LIST_OFFSETS, name: "ListOffsets", min: 1, max: 3, firstFlexible: 6 },
  { apiKey: ApiKey.METADATA, name: "Metadata", min: 0, max: 6, firstFlexible: 9 },
  { apiKey: ApiKey.OFFSET_COMMIT, name: "OffsetCommit", min: 2, max: 7, firstFlexible: 8 },
  { apiKey: ApiKey.OFFSET_FETCH, name: "OffsetFetch", min: 1, max: 5, firstFlexible: 6 },
  { apiKey: ApiKey.FIND_COORDINATOR, name: "FindCoordinator", min: 0, max: 2, firstFlexible: 3 },
  { apiKey: ApiKey.JOIN_GROUP, name: "JoinGroup", min: 0, max: 5, firstFlexible: 6 },
  { apiKey: ApiKey.HEARTBEAT, name: "Heartbeat", min: 0, max: 3, firstFlexible: 4 },
  { apiKey: ApiKey.LEAVE_GROUP, name: "LeaveGroup", min: 0, max: 3, firstFlexible: 4 },
  { apiKey: ApiKey.SYNC_GROUP, name: "SyncGroup", min: 0, max: 3, firstFlexible: 4 },
  { apiKey: ApiKey.DESCRIBE_GROUPS, name: "DescribeGroups", min: 0, max: 4, firstFlexible: 5 },
  { apiKey: ApiKey.LIST_GROUPS, name: "ListGroups", min: 0, max: 2, firstFlexible: 3 },
  { apiKey: ApiKey.SASL_HANDSHAKE, name: "SaslHandshake", min: 0, max: 1, firstFlexible: 2 },
  { apiKey: ApiKey.API_VERSIONS, name: "ApiVersions", min: 0, max: 3, firstFlexible: 3 },
  { apiKey: ApiKey.CREATE_TOPICS, name: "CreateTopics", min: 0, max: 4, firstFlexible: 5 },
  { apiKey: ApiKey.DELETE_TOPICS, name: "DeleteTopics", min: 0, max: 3, firstFlexible: 4 },
  { apiKey: ApiKey.INIT_PRODUCER_ID, name: "InitProducerId", min: 0, max: 1, firstFlexible: 2 },
  { apiKey: ApiKey.DESCRIBE_CONFIGS, name: "DescribeConfigs", min: 0, max: 2, firstFlexible: 4 },
  { apiKey: ApiKey.SASL_AUTHENTICATE, name: "SaslAuthenticate", min: 0, max: 1, firstFlexible: 2 },
  { apiKey: ApiKey.CREATE_PARTITIONS, name: "CreatePartitions", min: 0, max: 1, firstFlexible: 2 },
];

const byKey: (VersionRange | undefined)[] = [];
for (const api of SUPPORTED_APIS) byKey[api.apiKey] = api;

/** The supported range of an API, or undefined when Conch does not decode it. */
export function supportedApi(apiKey: number): VersionRange | undefined {
  return byKey[apiKey];
}

export function isFlexible(apiKey: number, version: number): boolean {
  const api = byKey[apiKey];
  return api !== undefined && version >= api.firstFlexible;
}

/** Request header version: 2 (tagged fields) for flexible versions, else 1 (client id). */
export function requestHeaderVersion(apiKey: number, version: number): 1 | 2 {
  return isFlexible(apiKey, version) ? 2 : 1;
}

/**
 * Response header version: 1 (tagged fields) for flexible versions, else 0. ApiVersions answers
 * with header 0 at every version, so that a client that does not yet know whether the broker speaks
 * flexible versions can read the error code (KIP-511).
 */
export function responseHeaderVersion(apiKey: number, version: number): 0 | 1 {
  return apiKey !== ApiKey.API_VERSIONS && isFlexible(apiKey, version) ? 1 : 0;
}

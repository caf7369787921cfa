/**
 * 32 DescribeConfigs, versions 0-2: the configuration of topics (or brokers).
 *
 *   request v0    = resources [resource_type int8 | resource_name string
 *                              | configuration_keys nullable [string]]   (null = every key)
 *   request v1-2  = v0 | include_synonyms boolean
 *   response v0   = throttle_time_ms int32
 *                   | results [error_code int16 | error_message nullable_string | resource_type int8
 *                              | resource_name string
 *                              | configs [name string | value nullable_string | read_only boolean
 *                                         | is_default boolean | is_sensitive boolean]]
 *   response v1-2 = as v0, each config: name | value | read_only | config_source int8
 *                   | is_sensitive | synonyms [name string | value nullable_string | source int8]
 *
 * Resource types: 2 topic, 4 broker. Config sources: 1 dynamic topic, 4 static broker, 5 default.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export const ConfigResourceType = { TOPIC: 2, BROKER: 4 } as const;
export const ConfigSource = { DYNAMIC_TOPIC: 1, STATIC_BROKER: 4, DEFAULT: 5 } as const;

export interface DescribeConfigsRequest {
  resources: { resourceType: number; resourceName: string; configurationKeys: string[] | null }[];
  /** v1+; false below. */
  includeSynonyms: boolean;
}

export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  /** v1+ (v0 writes isDefault = configSource === DEFAULT). */
  configSource: number;
  isSensitive: boolean;
  synonyms: readonly { name: string; value: string | null; source: number }[];
}

export interface DescribeConfigsResponse {
  throttleTimeMs: number;
  results: readonly {
    errorCode: number;
    errorMessage: string | null;
    resourceType: number;
    resourceName: string;
    configs: readonly DescribedConfig[];
  }[];
}

export function decodeDescribeConfigsRequest(h: KafkaRequestHeader): DescribeConfigsRequest {
  const v = checkVersion(h, ApiKey.DESCRIBE_CONFIGS);
  const r = h.body;
  const n = r.arrayCount(1 + 2 + 4);
  const resources: DescribeConfigsRequest["resources"] = [];
  for (let i = 0; i < n; i++) {
    const resourceType = r.int8();
    const resourceName = r.string();
    const k = r.nullableArrayCount(2);
    let configurationKeys: string[] | null = null;
    if (k >= 0) {
      configurationKeys = [];
      for (let j = 0; j < k; j++) configurationKeys.push(r.string());
    }
    resources.push({ resourceType, resourceName, configurationKeys });
  }
  const includeSynonyms = v >= 1 ? r.boolean() : false;
  r.done();
  return { resources, includeSynonyms };
}

function writeBody(w: KafkaSink, v: number, res: DescribeConfigsResponse): void {
  w.int32(res.throttleTimeMs);
  w.arrayCount(res.results.length);
  for (const result of res.results) {
    w.int16(result.errorCode);
    w.nullableString(result.errorMessage);
    w.int8(result.resourceType);
    w.string(result.resourceName);
    w.arrayCount(result.configs.length);
    for (const c of result.configs) {
      w.string(c.name);
      w.nullableString(c.value);
      w.boolean(c.readOnly);
      if (v >= 1) w.int8(c.configSource);
      else w.boolean(c.configSource === ConfigSource.DEFAULT);
      w.boolean(c.isSensitive);
      if (v >= 1) {
        w.arrayCount(c.synonyms.length);
        for (const s of c.synonyms) {
          w.string(s.name);
          w.nullableString(s.value);
          w.int8(s.source);
        }
      }
    }
  }
}

export function encodeDescribeConfigsResponse(
  correlationId: number,
  version: number,
  res: DescribeConfigsResponse,
): Buffer {
  return encodeResponse(ApiKey.DESCRIBE_CONFIGS, version, correlationId, writeBody, res);
}

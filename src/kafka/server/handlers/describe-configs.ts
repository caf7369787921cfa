/**
 * DescribeConfigs: a topic's effective config (the same keys as Conch's own topic configs), and
 * for the broker resource (named by its node id) the few broker settings Kafka clients look for,
 * under Kafka's names. Values are reported as defaults: the broker does not yet say which a topic
 * overrides. Every value is read-only here (AlterConfigs is not served).
 */
import type { BrokerConfig } from "../../../broker/broker-config.js";
import { ConchError, ErrorCode } from "../../../format/errors.js";
import { authorize } from "../../../server/authorize.js";
import {
  ConfigResourceType,
  ConfigSource,
  type DescribeConfigsResponse,
  type DescribedConfig,
  decodeDescribeConfigsRequest,
  encodeDescribeConfigsResponse,
} from "../../protocol/describe-configs.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { kafkaErrorCode, kafkaErrorMessage } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

type Result = DescribeConfigsResponse["results"][number];

export const describeConfigsHandler: KafkaHandler = {
  doneWithFrame: true,
  handle(ctx, h) {
    const req = decodeDescribeConfigsRequest(h);
    const results: Result[] = req.resources.map((r) => {
      try {
        const all = configsOf(ctx, r.resourceType, r.resourceName);
        const keys = r.configurationKeys;
        const picked = keys === null ? all : all.filter(([name]) => keys.includes(name));
        return {
          errorCode: KafkaErrorCode.NONE,
          errorMessage: null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: picked.map(([name, value]) => described(name, value)),
        };
      } catch (err) {
        return {
          errorCode: kafkaErrorCode(err),
          errorMessage: kafkaErrorMessage(err),
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: [],
        };
      }
    });
    return encodeDescribeConfigsResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, results });
  },
};

function configsOf(ctx: KafkaContext, type: number, name: string): [string, string][] {
  if (type === ConfigResourceType.TOPIC) {
    authorize(ctx, "describe", "topic", name);
    return Object.entries(ctx.broker.topicInfo(name).configs);
  }
  if (type === ConfigResourceType.BROKER && name === String(ctx.node.nodeId)) {
    authorize(ctx, "describe", "cluster", "cluster");
    return brokerConfigs(ctx.broker.config);
  }
  throw new ConchError(ErrorCode.INVALID_REQUEST, `no config resource of type ${type} named "${name}"`);
}

function brokerConfigs(c: BrokerConfig): [string, string][] {
  return [
    ["auto.create.topics.enable", String(c.autoCreateTopics)],
    ["num.partitions", String(c.defaultPartitions)],
    ["message.max.bytes", String(c.maxBatchBytes)],
    ["log.retention.ms", String(c.retentionMs)],
    ["log.retention.bytes", String(c.retentionBytes)],
    ["log.segment.bytes", String(c.segmentBytes)],
  ];
}

function described(name: string, value: string): DescribedConfig {
  return {
    name,
    value,
    readOnly: true,
    configSource: ConfigSource.DEFAULT,
    isSensitive: false,
    synonyms: [],
  };
}

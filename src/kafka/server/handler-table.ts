/**
 * The Kafka APIs this front-end serves, by API key. The consumer-group APIs (FindCoordinator,
 * JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups,
 * ListGroups) come from their own module (groups/) as a map of bare handler functions, the default
 * `groupHandlers`; what is not in the table is not advertised by ApiVersions.
 */
import { ApiKey } from "../protocol/api-keys.js";
import type { KafkaRequestHeader } from "../protocol/frame.js";
import { KAFKA_GROUP_HANDLERS } from "./groups/index.js";
import { apiVersionsHandler } from "./handlers/api-versions.js";
import { createPartitionsHandler } from "./handlers/create-partitions.js";
import { createTopicsHandler } from "./handlers/create-topics.js";
import { deleteTopicsHandler } from "./handlers/delete-topics.js";
import { describeConfigsHandler } from "./handlers/describe-configs.js";
import { fetchHandler } from "./handlers/fetch.js";
import { initProducerIdHandler } from "./handlers/init-producer-id.js";
import { listOffsetsHandler } from "./handlers/list-offsets.js";
import { metadataHandler } from "./handlers/metadata.js";
import { produceHandler } from "./handlers/produce.js";
import type { KafkaContext, KafkaHandlerTable, KafkaReply } from "./kafka-handler.js";

/**
 * A handler as a bare function: the request's header in (its body not yet read), the whole
 * response frame out. It may keep views of the frame (a JoinGroup's protocol metadata while it
 * waits), so the session hands it a frame of its own.
 */
export type KafkaHandleFunction = (ctx: KafkaContext, h: KafkaRequestHeader) => KafkaReply;

/** Every handler of the Kafka front-end, the group handlers included. */
export function defaultKafkaHandlers(
  groupHandlers: ReadonlyMap<number, KafkaHandleFunction> = KAFKA_GROUP_HANDLERS,
): KafkaHandlerTable {
  const table: KafkaHandlerTable = new Map();
  table.set(ApiKey.API_VERSIONS, apiVersionsHandler(table));
  table.set(ApiKey.METADATA, metadataHandler);
  table.set(ApiKey.PRODUCE, produceHandler);
  table.set(ApiKey.FETCH, fetchHandler);
  table.set(ApiKey.LIST_OFFSETS, listOffsetsHandler);
  table.set(ApiKey.CREATE_TOPICS, createTopicsHandler);
  table.set(ApiKey.DELETE_TOPICS, deleteTopicsHandler);
  table.set(ApiKey.CREATE_PARTITIONS, createPartitionsHandler);
  table.set(ApiKey.DESCRIBE_CONFIGS, describeConfigsHandler);
  table.set(ApiKey.INIT_PRODUCER_ID, initProducerIdHandler);
  for (const [apiKey, handle] of groupHandlers) table.set(apiKey, { handle });
  return table;
}

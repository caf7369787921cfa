/**
 * The Kafka APIs this front-end serves, by API key. The consumer-group APIs (FindCoordinator,
 * JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups,
 * ListGroups) are added by `registerGroupHandlers`, a hook their module fills in; until it does,
 * they are not in the table and so not advertised by ApiVersions.
 */
import { ApiKey } from "../protocol/api-keys.js";
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
import type { KafkaHandlerTable } from "./kafka-handler.js";

/** Adds the consumer-group handlers to a table. */
export type GroupHandlerRegistration = (table: KafkaHandlerTable) => void;

/** Every handler of the Kafka front-end; `registerGroupHandlers` adds the group APIs. */
export function defaultKafkaHandlers(registerGroupHandlers?: GroupHandlerRegistration): KafkaHandlerTable {
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
  registerGroupHandlers?.(table);
  return table;
}

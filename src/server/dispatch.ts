/**
 * The dispatch table: a handler per apiKey (docs/protocol.md). Keys 20-29 are the consumer group
 * handlers (group-handlers.ts).
 */
import {
  API_VERSION,
  ApiKey,
  type ApiKeyNumber,
  DESCRIBE_TOPIC_LEADERS_VERSION,
  FETCH_GROUP_VERSION,
  GROUP_KIND_VERSION,
} from "../protocol/api.js";
import { PRODUCE_PARTITIONED_VERSION } from "../protocol/produce-v3.js";
import {
  alterTopic,
  createPartitions,
  createTopic,
  deleteTopic,
  listTopics,
  reassignPartitions,
} from "./admin-handlers.js";
import { fetch, initProducerId, listOffsets, produce } from "./data-handlers.js";
import { describeTopic } from "./describe-topic-handler.js";
import { fetchStream, streamCancel, streamCredit } from "./fetch-stream.js";
import * as groups from "./group-handlers.js";
import type { Handler, HandlerEntry, HandlerTable } from "./handler.js";
import { handshake } from "./handshake-handler.js";
import { metadata } from "./metadata-handler.js";
import { replicaFetch } from "./replica-fetch.js";
import { saslAuthenticate, saslHandshake } from "./sasl-handlers.js";

/** Slots for every apiKey up to the last one reserved for groups. */
const TABLE_SIZE = 30;

export function defaultHandlers(): HandlerTable {
  const table = new Array<HandlerEntry | undefined>(TABLE_SIZE).fill(undefined);
  const add = (apiKey: ApiKeyNumber, handle: Handler): void => {
    table[apiKey] = { version: API_VERSION[apiKey], handle };
  };
  add(ApiKey.HANDSHAKE, handshake);
  add(ApiKey.CREATE_TOPIC, createTopic);
  add(ApiKey.DELETE_TOPIC, deleteTopic);
  add(ApiKey.LIST_TOPICS, listTopics);
  // Version 2 adds the quarantined ranges, version 3 the leaders; versions 1 and 2 stay served.
  table[ApiKey.DESCRIBE_TOPIC] = {
    version: DESCRIBE_TOPIC_LEADERS_VERSION,
    minVersion: API_VERSION[ApiKey.DESCRIBE_TOPIC],
    handle: describeTopic,
  };
  // The broker copies a produce's batches into the log before it returns (Broker.produce).
  // Version 2 carries many partitions, version 3 one partitioned batch; version 1 stays served.
  table[ApiKey.PRODUCE] = {
    version: PRODUCE_PARTITIONED_VERSION,
    minVersion: API_VERSION[ApiKey.PRODUCE],
    copiesFrame: true,
    handle: produce,
  };
  // Version 2 is a group member fetching as the partition's owner; version 1 stays served.
  table[ApiKey.FETCH] = {
    version: FETCH_GROUP_VERSION,
    minVersion: API_VERSION[ApiKey.FETCH],
    handle: fetch,
  };
  add(ApiKey.LIST_OFFSETS, listOffsets);
  add(ApiKey.ALTER_TOPIC, alterTopic);
  add(ApiKey.FETCH_STREAM, fetchStream);
  add(ApiKey.CREATE_PARTITIONS, createPartitions);
  add(ApiKey.REASSIGN_PARTITIONS, reassignPartitions);
  // Credit and cancel are read whole before they are acted on, and answered with nothing.
  table[ApiKey.STREAM_CREDIT] = {
    version: API_VERSION[ApiKey.STREAM_CREDIT],
    copiesFrame: true,
    handle: streamCredit,
  };
  table[ApiKey.STREAM_CANCEL] = {
    version: API_VERSION[ApiKey.STREAM_CANCEL],
    copiesFrame: true,
    handle: streamCancel,
  };
  add(ApiKey.SASL_HANDSHAKE, saslHandshake);
  add(ApiKey.SASL_AUTHENTICATE, saslAuthenticate);
  add(ApiKey.REPLICA_FETCH, replicaFetch);

  add(ApiKey.METADATA, metadata);
  add(ApiKey.INIT_PRODUCER_ID, initProducerId);
  add(ApiKey.JOIN_GROUP, groups.joinGroup);
  add(ApiKey.HEARTBEAT, groups.heartbeat);
  add(ApiKey.LEAVE_GROUP, groups.leaveGroup);
  add(ApiKey.COMMIT_OFFSETS, groups.commitOffsets);
  add(ApiKey.FETCH_OFFSETS, groups.fetchOffsets);
  // Version 2 adds each group's kind and protocol type; version 1 stays served.
  table[ApiKey.LIST_GROUPS] = {
    version: GROUP_KIND_VERSION,
    minVersion: API_VERSION[ApiKey.LIST_GROUPS],
    handle: groups.listGroups,
  };
  table[ApiKey.DESCRIBE_GROUP] = {
    version: GROUP_KIND_VERSION,
    minVersion: API_VERSION[ApiKey.DESCRIBE_GROUP],
    handle: groups.describeGroup,
  };
  add(ApiKey.RESET_OFFSETS, groups.resetOffsets);
  add(ApiKey.DELETE_GROUP, groups.deleteGroup);
  add(ApiKey.FIND_COORDINATOR, groups.findCoordinator);
  return table;
}

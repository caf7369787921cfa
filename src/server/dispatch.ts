/**
 * The dispatch table: a handler per apiKey (docs/protocol.md). Keys 20-29 are left for the consumer
 * group handlers, which join the table beside these.
 */
import { API_VERSION, ApiKey, type ApiKeyNumber } from "../protocol/api.js";
import { alterTopic, createTopic, deleteTopic, describeTopic, listTopics } from "./admin-handlers.js";
import { fetch, listOffsets, produce } from "./data-handlers.js";
import type { Handler, HandlerEntry, HandlerTable } from "./handler.js";
import { handshake } from "./handshake-handler.js";

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
  add(ApiKey.DESCRIBE_TOPIC, describeTopic);
  add(ApiKey.PRODUCE, produce);
  add(ApiKey.FETCH, fetch);
  add(ApiKey.LIST_OFFSETS, listOffsets);
  add(ApiKey.ALTER_TOPIC, alterTopic);
  return table;
}

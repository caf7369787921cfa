/**
 * /api/v1/topics: list, create, describe, delete, alter configs, add partitions, reassign a
 * partition's replicas (cluster mode), browse messages. In cluster mode a list or description is
 * the cluster's, from any broker; a single-node broker's is its own (topic-rows.ts).
 */
import type { Broker } from "../broker/broker.js";
import { describeTopicView } from "../broker/cluster-topic-view.js";
import { MAX_PARTITIONS } from "../broker/topic-store.js";
import type { HttpContext } from "./http-context.js";
import { badRequest } from "./http-errors.js";
import { browse, MAX_MESSAGES } from "./message-browser.js";
import {
  brokerIdsField,
  configsField,
  integerField,
  integerParam,
  readJsonObject,
  stringField,
} from "./request-input.js";
import type { Route } from "./router.js";
import { partitionRow, topicDetail, topicNames, topicSummary } from "./topic-rows.js";

const MAX_OFFSET = Number.MAX_SAFE_INTEGER;
/** A key to search for; longer keys exist, but nobody types them into a search box. */
const MAX_KEY_BYTES = 4096;

/**
 * The topic as describeTopicView has it: the cluster's, or a single-node broker's own. It never
 * waits for a recovery after a crash: a partition not recovered yet is reported with its figures
 * not known (topic-rows.ts).
 */
function describe(broker: Broker, name: string) {
  return describeTopicView(broker, name, "cluster");
}

/** A listing's row: a topic's size and message count (null while a partition's figures are not known). */
async function summary(broker: Broker, name: string) {
  return topicSummary(await describe(broker, name));
}

async function detail(broker: Broker, name: string) {
  return topicDetail(await describe(broker, name), broker.cluster !== null);
}

async function partitions(broker: Broker, name: string) {
  const placed = broker.cluster !== null;
  return (await describe(broker, name)).partitions.map((p) => partitionRow(p, placed));
}

export function topicRoutes(context: HttpContext): Route[] {
  const b = (): Broker => context.requireBroker();
  return [
    {
      method: "GET",
      path: "/api/v1/topics",
      access: "login",
      handler: async ({ access }) => {
        const broker = b();
        // As the native ListTopics: only the topics the principal may describe.
        const topics = topicNames(broker).filter((t) => access.allowed("describe", "topic", t));
        return { status: 200, body: { topics: await Promise.all(topics.map((t) => summary(broker, t))) } };
      },
    },
    {
      method: "POST",
      path: "/api/v1/topics",
      access: "login",
      handler: async ({ req, access }) => {
        const body = await readJsonObject(req);
        const name = stringField(body, "name");
        // Create on the cluster, or on the topic itself (as the native CreateTopic).
        if (!access.allowed("create", "cluster", "cluster")) access.check("create", "topic", name);
        const partitions =
          body.partitions === undefined ? 1 : integerField(body, "partitions", 1, MAX_PARTITIONS);
        await b().createTopic(name, partitions, configsField(body, "configs"));
        return { status: 201, body: await detail(b(), name) };
      },
    },
    {
      method: "GET",
      path: "/api/v1/topics/:topic",
      access: { operation: "describe", type: "topic", param: "topic" },
      handler: async ({ params }) => ({ status: 200, body: await detail(b(), params.topic!) }),
    },
    {
      method: "DELETE",
      path: "/api/v1/topics/:topic",
      access: { operation: "delete", type: "topic", param: "topic" },
      handler: async ({ params }) => {
        await b().deleteTopic(params.topic!);
        return { status: 200, body: { deleted: params.topic } };
      },
    },
    {
      method: "PATCH",
      path: "/api/v1/topics/:topic/configs",
      access: { operation: "alter", type: "topic", param: "topic" },
      handler: async ({ req, params }) => {
        const body = await readJsonObject(req);
        await b().alterTopic(params.topic!, configsField(body, "configs"));
        return { status: 200, body: await detail(b(), params.topic!) };
      },
    },
    {
      method: "GET",
      path: "/api/v1/topics/:topic/partitions",
      access: { operation: "describe", type: "topic", param: "topic" },
      handler: async ({ params }) => ({
        status: 200,
        body: { partitions: await partitions(b(), params.topic!) },
      }),
    },
    {
      method: "POST",
      path: "/api/v1/topics/:topic/partitions",
      access: { operation: "alter", type: "topic", param: "topic" },
      handler: async ({ req, params }) => {
        const body = await readJsonObject(req);
        await b().addPartitions(params.topic!, integerField(body, "partitions", 1, MAX_PARTITIONS));
        return { status: 200, body: await detail(b(), params.topic!) };
      },
    },
    {
      method: "POST",
      path: "/api/v1/topics/:topic/partitions/:partition/reassign",
      access: { operation: "alter", type: "topic", param: "topic" },
      handler: async ({ req, params }) => {
        const body = await readJsonObject(req);
        const partition = integerParam("partition", params.partition, 0, MAX_PARTITIONS - 1);
        const replicas = brokerIdsField(body, "replicas");
        await b().reassignPartitions([{ topic: params.topic!, partition, replicas }]);
        // Accepted: the move is recorded and runs on (docs/cluster.md, "Reassignment").
        return { status: 202, body: { topic: params.topic!, partition, replicas } };
      },
    },
    {
      method: "GET",
      path: "/api/v1/topics/:topic/partitions/:partition/messages",
      access: { operation: "read", type: "topic", param: "topic" },
      handler: async ({ params, query }) => {
        const broker = b();
        const topic = params.topic!;
        const partition = integerParam("partition", params.partition, 0, MAX_PARTITIONS - 1);
        const limit = integerParam("limit", query.get("limit"), 1, MAX_MESSAGES, 20);
        const key = query.get("key");
        if (key !== null && Buffer.byteLength(key) > MAX_KEY_BYTES) {
          throw badRequest(`key must be at most ${MAX_KEY_BYTES} bytes`);
        }
        const timestamp = query.get("timestamp");
        let from: number;
        if (timestamp !== null) {
          if (query.has("offset")) throw badRequest("give offset or timestamp, not both");
          const ts = integerParam("timestamp", timestamp, 0, MAX_OFFSET);
          from = (await broker.listOffsets(topic, partition, { kind: "timestamp", timestampMs: ts })).offset;
        } else {
          broker.checkPartition(topic, partition);
          from = integerParam("offset", query.get("offset"), 0, MAX_OFFSET, 0);
        }
        return { status: 200, body: await browse(broker, topic, partition, from, limit, key) };
      },
    },
  ];
}

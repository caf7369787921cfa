/**
 * OffsetFetch (9): committed offsets of native and Kafka commits alike; -1 with no error for a
 * partition never committed. A null topic array (v2+) asks for every partition the group committed.
 *
 * As in Kafka, it needs describe on the group (else GROUP_AUTHORIZATION_FAILED for the request and
 * each partition asked for) and describe on each topic: a named topic the principal may not
 * describe is TOPIC_AUTHORIZATION_FAILED per partition; from "every partition" such topics are left
 * out.
 */
import type { OffsetEntry } from "../../../broker/group-coordinator.js";
import { allowed } from "../../../server/authorize.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeOffsetFetchRequest,
  encodeOffsetFetchResponse,
  type OffsetFetchResponse,
} from "../../protocol/offset-fetch.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

type Partition = OffsetFetchResponse["topics"][number]["partitions"][number];

export const offsetFetch: KafkaGroupHandler = (ctx, h) => {
  const req = decodeOffsetFetchRequest(h);
  const asked = req.topics?.flatMap((t) =>
    t.partitionIndexes.map((partition) => ({ topic: t.name, partition })),
  );
  const byTopic = new Map<string, Partition[]>();
  const add = (e: OffsetEntry, errorCode: number): void => {
    let list = byTopic.get(e.topic);
    if (list === undefined) byTopic.set(e.topic, (list = []));
    list.push({
      partitionIndex: e.partition,
      committedOffset: e.offset,
      committedLeaderEpoch: -1,
      metadata: "",
      errorCode,
    });
  };
  let errorCode = kafkaRefusal(ctx, "describe", "group", req.groupId);
  if (errorCode !== KafkaErrorCode.NONE) {
    for (const p of asked ?? []) add({ ...p, offset: -1 }, errorCode);
    return answer(h.correlationId, h.apiVersion, byTopic, errorCode);
  }
  const mayDescribe = (topic: string): boolean => allowed(ctx, "describe", "topic", topic);
  const refused = asked?.filter((p) => !mayDescribe(p.topic)) ?? [];
  const permitted = refused.length === 0 ? asked : asked?.filter((p) => mayDescribe(p.topic));
  let entries: OffsetEntry[];
  try {
    // An empty list asks the coordinator for every committed partition: only a null array means that.
    entries = permitted?.length === 0 ? [] : ctx.broker.groups.fetchOffsets(req.groupId, permitted ?? []);
    if (permitted === undefined) entries = entries.filter((e) => mayDescribe(e.topic));
  } catch (err) {
    errorCode = kafkaGroupErrorCode(err);
    entries = (permitted ?? []).map((p) => ({ ...p, offset: -1 }));
  }
  for (const e of entries) add(e, errorCode);
  for (const p of refused) add({ ...p, offset: -1 }, KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED);
  return answer(h.correlationId, h.apiVersion, byTopic, errorCode);
};

function answer(
  correlationId: number,
  version: number,
  byTopic: Map<string, Partition[]>,
  errorCode: number,
) {
  return encodeOffsetFetchResponse(correlationId, version, {
    throttleTimeMs: 0,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    errorCode,
  });
}

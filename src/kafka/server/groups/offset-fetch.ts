/**
 * OffsetFetch (9): committed offsets of native and Kafka commits alike; -1 with no error for a
 * partition never committed. A null topic array (v2+) asks for every partition the group committed.
 */
import type { OffsetEntry } from "../../../broker/group-coordinator.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeOffsetFetchRequest,
  encodeOffsetFetchResponse,
  type OffsetFetchResponse,
} from "../../protocol/offset-fetch.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const offsetFetch: KafkaGroupHandler = (ctx, h) => {
  const req = decodeOffsetFetchRequest(h);
  const asked = req.topics?.flatMap((t) =>
    t.partitionIndexes.map((partition) => ({ topic: t.name, partition })),
  );
  let entries: OffsetEntry[];
  let errorCode: number = KafkaErrorCode.NONE;
  try {
    // An empty list asks the coordinator for every committed partition: only a null array means that.
    entries = asked?.length === 0 ? [] : ctx.broker.groups.fetchOffsets(req.groupId, asked ?? []);
  } catch (err) {
    errorCode = kafkaGroupErrorCode(err);
    entries = (asked ?? []).map((p) => ({ ...p, offset: -1 }));
  }
  const byTopic = new Map<string, OffsetFetchResponse["topics"][number]["partitions"][number][]>();
  for (const e of entries) {
    let list = byTopic.get(e.topic);
    if (list === undefined) byTopic.set(e.topic, (list = []));
    list.push({
      partitionIndex: e.partition,
      committedOffset: e.offset,
      committedLeaderEpoch: -1,
      metadata: "",
      errorCode,
    });
  }
  return encodeOffsetFetchResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    errorCode,
  });
};

/**
 * ListOffsets: the earliest (-2) or latest (-1) offset of a partition, or the first offset whose
 * timestamp is at or after a time. Kafka answers "no such offset" for a time past the last record
 * with offset -1 and timestamp -1; the timestamp of a found offset is not looked up (-1), which
 * every client here accepts.
 */
import type { OffsetSpec } from "../../../broker/broker-requests.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  decodeListOffsetsRequest,
  encodeListOffsetsResponse,
  ListOffsetsTimestamp,
} from "../../protocol/list-offsets.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaErrorCode } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

const EARLIEST: OffsetSpec = { kind: "earliest" };
const LATEST: OffsetSpec = { kind: "latest" };

/** Kafka's timestamp field as the broker's offset spec. */
function specOf(timestamp: number): OffsetSpec {
  if (timestamp === ListOffsetsTimestamp.EARLIEST) return EARLIEST;
  if (timestamp === ListOffsetsTimestamp.LATEST) return LATEST;
  return { kind: "timestamp", timestampMs: timestamp };
}

interface PartitionOffset {
  partitionIndex: number;
  errorCode: number;
  timestamp: number;
  offset: number;
}

export const listOffsetsHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeListOffsetsRequest(h);
    const topics = await Promise.all(
      req.topics.map(async (t) => {
        const denied = kafkaRefusal(ctx, "describe", "topic", t.name);
        return {
          name: t.name,
          partitions: await Promise.all(
            t.partitions.map((p) =>
              denied === KafkaErrorCode.NONE
                ? lookUp(ctx, t.name, p.partitionIndex, p.timestamp)
                : { partitionIndex: p.partitionIndex, errorCode: denied, timestamp: -1, offset: -1 },
            ),
          ),
        };
      }),
    );
    return encodeListOffsetsResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, topics });
  },
};

async function lookUp(
  ctx: KafkaContext,
  topic: string,
  partitionIndex: number,
  timestamp: number,
): Promise<PartitionOffset> {
  try {
    const r = await ctx.broker.listOffsets(topic, partitionIndex, specOf(timestamp));
    if (!r.found) return { partitionIndex, errorCode: KafkaErrorCode.NONE, timestamp: -1, offset: -1 };
    return { partitionIndex, errorCode: KafkaErrorCode.NONE, timestamp: -1, offset: r.offset };
  } catch (err) {
    return { partitionIndex, errorCode: kafkaErrorCode(err), timestamp: -1, offset: -1 };
  }
}

/**
 * 4 DescribeTopic, versions 1 to 3. A single-node broker describes its own topic, as it always
 * has (version 3 adds broker 0 leading every partition). In cluster mode every version describes
 * the cluster's topic (broker/cluster-topic-view.ts): its partitions from the cluster's metadata,
 * their figures from their leaders. Version 3 says which figures are not known here (a leader
 * that did not answer in time, an offline partition, on a single node a partition still being
 * recovered after a crash) and answers at once; versions 1 and 2 cannot say so: on a single node
 * they wait for the topic's recovery (bounded, then the retriable TIMEOUT), in cluster mode they
 * answer the error, never a made-up offset.
 */
import { type ClusterTopicView, describeTopicView } from "../broker/cluster-topic-view.js";
import { DESCRIBE_TOPIC_LEADERS_VERSION, DESCRIBE_TOPIC_QUARANTINE_VERSION } from "../protocol/api.js";
import {
  DescribeScope,
  type DescribeTopicResponse,
  decodeDescribeTopicRequest,
  encodeDescribeTopicResponse,
  figuresUnknownError,
  type PartitionDescription,
  UNKNOWN_OFFSET,
} from "../protocol/describe-topic.js";
import { encodeDescribeTopicResponseV2 } from "../protocol/describe-topic-v2.js";
import {
  decodeDescribeTopicRequestV3,
  encodeDescribeTopicResponseV3,
} from "../protocol/describe-topic-v3.js";
import { requestApiVersion } from "../protocol/frame.js";
import { authorize } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";

export function describeTopic(
  ctx: RequestContext,
  frame: Buffer,
  correlationId: number,
): Reply | Promise<Reply> {
  const version = requestApiVersion(frame);
  if (version >= DESCRIBE_TOPIC_LEADERS_VERSION) {
    const req = decodeDescribeTopicRequestV3(frame);
    authorize(ctx, "describe", "topic", req.topic);
    const scope = req.scope === DescribeScope.LED_HERE ? "led-here" : "cluster";
    return describeTopicView(ctx.broker, req.topic, scope).then((view) =>
      encodeDescribeTopicResponseV3(correlationId, response(view)),
    );
  }
  const req = decodeDescribeTopicRequest(frame);
  authorize(ctx, "describe", "topic", req.topic);
  const encode =
    version >= DESCRIBE_TOPIC_QUARANTINE_VERSION
      ? encodeDescribeTopicResponseV2
      : encodeDescribeTopicResponse;
  if (ctx.broker.cluster === null) {
    return ctx.broker.recovered(req.topic).then(() => {
      const d = ctx.broker.describeTopic(req.topic);
      return encode(correlationId, { topic: d.name, partitions: d.partitions, configs: d.configs });
    });
  }
  return describeTopicView(ctx.broker, req.topic, "cluster").then((view) => {
    const missing = view.partitions.find((p) => p.figures === null);
    // Versions 1 and 2 have no way to say "not known": the error, not a made-up offset.
    if (missing !== undefined) throw figuresUnknownError(view.name, missing.partition, missing.leaderId);
    return encode(correlationId, response(view));
  });
}

function response(view: ClusterTopicView): DescribeTopicResponse {
  const partitions = view.partitions.map((p): PartitionDescription => {
    const f = p.figures;
    const placement = { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, replicas: p.replicas, isr: p.isr };
    if (f === null) {
      return {
        partition: p.partition,
        logStartOffset: UNKNOWN_OFFSET,
        highWatermark: UNKNOWN_OFFSET,
        figuresKnown: false,
        ...placement,
      };
    }
    return {
      partition: p.partition,
      logStartOffset: f.logStartOffset,
      logEndOffset: f.logEndOffset,
      highWatermark: f.highWatermark,
      sizeBytes: f.sizeBytes,
      segments: f.segments,
      quarantined: [...f.quarantined],
      figuresKnown: true,
      ...placement,
    };
  });
  return { topic: view.name, partitions, configs: view.configs };
}

/**
 * FindCoordinator (10): for a group its principal may describe (Kafka's check; others are
 * GROUP_AUTHORIZATION_FAILED), the broker that coordinates it: this one on a single node; in
 * cluster mode the leader of the group's `__consumer_offsets` partition, at its advertised Kafka
 * listener, or COORDINATOR_NOT_AVAILABLE (retriable) while that partition has no leader.
 * Transactions are not supported, so a transactional id has no coordinator.
 */

import type { ClusterBroker } from "../../../broker/cluster-metadata.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  CoordinatorKeyType,
  decodeFindCoordinatorRequest,
  encodeFindCoordinatorResponse,
} from "../../protocol/find-coordinator.js";
import type { KafkaRequestHeader } from "../../protocol/frame.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const findCoordinator: KafkaGroupHandler = (ctx, h) => {
  const req = decodeFindCoordinatorRequest(h);
  if (req.keyType !== CoordinatorKeyType.GROUP) {
    return noCoordinator(h, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE, "transactions are not supported");
  }
  const refused = kafkaRefusal(ctx, "describe", "group", req.key);
  if (refused !== KafkaErrorCode.NONE) return noCoordinator(h, refused, null);
  let found: Promise<ClusterBroker> | null;
  try {
    found = ctx.broker.groups.findCoordinator(req.key);
  } catch (err) {
    return noCoordinator(h, kafkaGroupErrorCode(err), (err as Error).message);
  }
  if (found === null) return answer(h, ctx.node);
  return found.then(
    (b) =>
      b.kafkaPort === 0
        ? noCoordinator(h, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE, `broker ${b.id} has no Kafka listener`)
        : answer(h, { nodeId: b.id, host: b.kafkaHost, port: b.kafkaPort }),
    (err: unknown) =>
      noCoordinator(h, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE, (err as Error).message ?? null),
  );
};

function answer(h: KafkaRequestHeader, node: { nodeId: number; host: string; port: number }): Buffer {
  return encodeFindCoordinatorResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    ...node,
  });
}

function noCoordinator(h: KafkaRequestHeader, errorCode: number, errorMessage: string | null): Buffer {
  return encodeFindCoordinatorResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    errorCode,
    errorMessage,
    nodeId: -1,
    host: "",
    port: -1,
  });
}

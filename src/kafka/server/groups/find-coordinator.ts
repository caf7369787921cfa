/**
 * FindCoordinator (10): this broker coordinates every group its principal may describe (Kafka's
 * check); others are GROUP_AUTHORIZATION_FAILED. Transactions are not supported, so a transactional
 * id has no coordinator.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  CoordinatorKeyType,
  decodeFindCoordinatorRequest,
  encodeFindCoordinatorResponse,
} from "../../protocol/find-coordinator.js";
import type { KafkaRequestHeader } from "../../protocol/frame.js";
import { kafkaRefusal } from "../kafka-acl.js";
import type { KafkaGroupHandler } from "./context.js";

export const findCoordinator: KafkaGroupHandler = (ctx, h) => {
  const req = decodeFindCoordinatorRequest(h);
  if (req.keyType !== CoordinatorKeyType.GROUP) {
    return noCoordinator(h, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE, "transactions are not supported");
  }
  const refused = kafkaRefusal(ctx, "describe", "group", req.key);
  if (refused !== KafkaErrorCode.NONE) return noCoordinator(h, refused, null);
  return encodeFindCoordinatorResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    ...ctx.node,
  });
};

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

/**
 * FindCoordinator (10): this broker coordinates every group. Transactions are not supported, so a
 * transactional id has no coordinator.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import {
  CoordinatorKeyType,
  decodeFindCoordinatorRequest,
  encodeFindCoordinatorResponse,
} from "../../protocol/find-coordinator.js";
import type { KafkaGroupHandler } from "./context.js";

export const findCoordinator: KafkaGroupHandler = (ctx, h) => {
  const req = decodeFindCoordinatorRequest(h);
  if (req.keyType !== CoordinatorKeyType.GROUP) {
    return encodeFindCoordinatorResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode: KafkaErrorCode.COORDINATOR_NOT_AVAILABLE,
      errorMessage: "transactions are not supported",
      nodeId: -1,
      host: "",
      port: -1,
    });
  }
  return encodeFindCoordinatorResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    ...ctx.node,
  });
};

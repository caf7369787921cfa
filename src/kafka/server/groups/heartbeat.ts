/** Heartbeat (12): REBALANCE_IN_PROGRESS tells a member to rejoin. Needs read on the group. */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeHeartbeatRequest, encodeHeartbeatResponse } from "../../protocol/heartbeat.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const heartbeat: KafkaGroupHandler = (ctx, h) => {
  const req = decodeHeartbeatRequest(h);
  let errorCode = kafkaRefusal(ctx, "read", "group", req.groupId);
  if (errorCode === KafkaErrorCode.NONE) {
    try {
      ctx.broker.groups.kafkaHeartbeat(req.groupId, req.memberId, req.generationId);
    } catch (err) {
      errorCode = kafkaGroupErrorCode(err);
    }
  }
  return encodeHeartbeatResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, errorCode });
};

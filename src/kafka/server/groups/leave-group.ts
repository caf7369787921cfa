/**
 * LeaveGroup (13): members leave at once. v3 names several members and answers each; below, the one
 * member's error is the response's. Needs read on the group: a refusal is the response's error with
 * no member answered, as Kafka answers it.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeLeaveGroupRequest, encodeLeaveGroupResponse } from "../../protocol/leave-group.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const leaveGroup: KafkaGroupHandler = (ctx, h) => {
  const req = decodeLeaveGroupRequest(h);
  const refused = kafkaRefusal(ctx, "read", "group", req.groupId);
  if (refused !== KafkaErrorCode.NONE) {
    return encodeLeaveGroupResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode: refused,
      members: [],
    });
  }
  const members = req.members.map((m) => {
    let errorCode: number = KafkaErrorCode.NONE;
    try {
      ctx.broker.groups.kafkaLeave(req.groupId, m.memberId);
    } catch (err) {
      errorCode = kafkaGroupErrorCode(err);
    }
    return { ...m, errorCode };
  });
  const errorCode = h.apiVersion >= 3 ? KafkaErrorCode.NONE : (members[0]?.errorCode ?? KafkaErrorCode.NONE);
  return encodeLeaveGroupResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, errorCode, members });
};

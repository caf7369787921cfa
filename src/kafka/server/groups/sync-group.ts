/** SyncGroup (14): the leader hands out assignments; every member waits for and receives its own. Needs read on the group. */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeSyncGroupRequest, encodeSyncGroupResponse } from "../../protocol/sync-group.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

const NO_ASSIGNMENT: Uint8Array = new Uint8Array(0);

export const syncGroup: KafkaGroupHandler = async (ctx, h) => {
  const req = decodeSyncGroupRequest(h);
  let errorCode = kafkaRefusal(ctx, "read", "group", req.groupId);
  let assignment = NO_ASSIGNMENT;
  if (errorCode === KafkaErrorCode.NONE) {
    try {
      assignment = await ctx.broker.groups.kafkaSync(
        {
          group: req.groupId,
          memberId: req.memberId,
          generation: req.generationId,
          assignments: req.assignments,
        },
        ctx.signal,
      );
    } catch (err) {
      errorCode = kafkaGroupErrorCode(err);
    }
  }
  return encodeSyncGroupResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, errorCode, assignment });
};

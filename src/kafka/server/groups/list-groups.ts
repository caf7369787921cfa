/** ListGroups (16): every group of both kinds; a native group's protocol type is "". */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeListGroupsRequest, encodeListGroupsResponse } from "../../protocol/list-groups.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const listGroups: KafkaGroupHandler = (ctx, h) => {
  decodeListGroupsRequest(h);
  let errorCode: number = KafkaErrorCode.NONE;
  let groups: { groupId: string; protocolType: string }[] = [];
  try {
    groups = ctx.broker.groups.listGroups().map((g) => ({ groupId: g.group, protocolType: g.protocolType }));
  } catch (err) {
    errorCode = kafkaGroupErrorCode(err);
  }
  return encodeListGroupsResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, errorCode, groups });
};

/**
 * ListGroups (16): every group of both kinds; a native group's protocol type is "". As in Kafka,
 * describe on the cluster lists them all; otherwise only the groups the principal may describe.
 */
import { allowed } from "../../../server/authorize.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeListGroupsRequest, encodeListGroupsResponse } from "../../protocol/list-groups.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const listGroups: KafkaGroupHandler = (ctx, h) => {
  decodeListGroupsRequest(h);
  let errorCode: number = KafkaErrorCode.NONE;
  let groups: { groupId: string; protocolType: string }[] = [];
  try {
    const all = allowed(ctx, "describe", "cluster", "cluster");
    for (const g of ctx.broker.groups.listGroups()) {
      if (all || allowed(ctx, "describe", "group", g.group)) {
        groups.push({ groupId: g.group, protocolType: g.protocolType });
      }
    }
  } catch (err) {
    errorCode = kafkaGroupErrorCode(err);
    groups = [];
  }
  return encodeListGroupsResponse(h.correlationId, h.apiVersion, { throttleTimeMs: 0, errorCode, groups });
};

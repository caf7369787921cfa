/**
 * DescribeGroups (15): groups of both kinds. A native group shows an empty protocol type, its
 * strategy as the protocol, and members without metadata or assignment bytes; a group the broker
 * does not know is "Dead", as Kafka answers it. Each group needs describe: a refused one is
 * GROUP_AUTHORIZATION_FAILED with nothing else of it answered.
 */
import { ConchError, ErrorCode } from "../../../format/errors.js";
import {
  type DescribedGroup,
  decodeDescribeGroupsRequest,
  encodeDescribeGroupsResponse,
} from "../../protocol/describe-groups.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupContext, KafkaGroupHandler } from "./context.js";

/** Kafka's "not asked for" authorized operations. */
const NO_OPERATIONS = -(2 ** 31);

export const describeGroups: KafkaGroupHandler = (ctx, h) => {
  const req = decodeDescribeGroupsRequest(h);
  return encodeDescribeGroupsResponse(h.correlationId, h.apiVersion, {
    throttleTimeMs: 0,
    groups: req.groups.map((g) => describeOne(ctx, g)),
  });
};

function describeOne(ctx: KafkaGroupContext, groupId: string): DescribedGroup {
  const empty = {
    groupId,
    protocolType: "",
    protocolData: "",
    members: [],
    authorizedOperations: NO_OPERATIONS,
  };
  const refused = kafkaRefusal(ctx, "describe", "group", groupId);
  if (refused !== KafkaErrorCode.NONE) return { ...empty, errorCode: refused, groupState: "" };
  try {
    const d = ctx.broker.groups.describeGroup(groupId);
    return {
      errorCode: KafkaErrorCode.NONE,
      groupId,
      groupState: d.state,
      protocolType: d.protocolType,
      protocolData: d.strategy,
      members: d.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: null,
        clientId: m.clientId,
        clientHost: "",
        memberMetadata: m.metadata,
        memberAssignment: m.assignmentBytes,
      })),
      authorizedOperations: NO_OPERATIONS,
    };
  } catch (err) {
    if (err instanceof ConchError && err.code === ErrorCode.UNKNOWN_GROUP) {
      return { ...empty, errorCode: KafkaErrorCode.NONE, groupState: "Dead" };
    }
    return { ...empty, errorCode: kafkaGroupErrorCode(err), groupState: "" };
  }
}

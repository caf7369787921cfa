/**
 * JoinGroup (11): a member joins and waits for the rebalance; the leader's answer carries every
 * member's metadata. From v4 a new member is first answered MEMBER_ID_REQUIRED with its id. Needs
 * read on the group; refused before anything of the group changes.
 */

import { KafkaErrorCode } from "../../protocol/error-codes.js";
import { decodeJoinGroupRequest, encodeJoinGroupResponse } from "../../protocol/join-group.js";
import { kafkaRefusal } from "../kafka-acl.js";
import { kafkaGroupErrorCode } from "../kafka-errors.js";
import type { KafkaGroupHandler } from "./context.js";

export const joinGroup: KafkaGroupHandler = async (ctx, h) => {
  const req = decodeJoinGroupRequest(h);
  const answer = (errorCode: number, memberId: string) =>
    encodeJoinGroupResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode,
      generationId: -1,
      protocolName: "",
      leader: "",
      memberId,
      members: [],
    });
  const refused = kafkaRefusal(ctx, "read", "group", req.groupId);
  if (refused !== KafkaErrorCode.NONE) return answer(refused, req.memberId);
  try {
    const r = await ctx.broker.groups.kafkaJoin(
      {
        group: req.groupId,
        memberId: req.memberId,
        clientId: h.clientId ?? "",
        protocolType: req.protocolType,
        protocols: req.protocols,
        sessionTimeoutMs: req.sessionTimeoutMs,
        rebalanceTimeoutMs: req.rebalanceTimeoutMs,
        requireKnownMemberId: h.apiVersion >= 4,
      },
      ctx.signal,
    );
    if (r.kind === "memberIdRequired") return answer(KafkaErrorCode.MEMBER_ID_REQUIRED, r.memberId);
    return encodeJoinGroupResponse(h.correlationId, h.apiVersion, {
      throttleTimeMs: 0,
      errorCode: KafkaErrorCode.NONE,
      generationId: r.generation,
      protocolName: r.protocol,
      leader: r.leader,
      memberId: r.memberId,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: null, metadata: m.metadata })),
    });
  } catch (err) {
    return answer(kafkaGroupErrorCode(err), req.memberId);
  }
};

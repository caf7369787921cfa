/**
 * One ACL check for every front-end (the native and Kafka sessions, the HTTP admin API): whether a
 * principal may perform an operation on a resource, and the refusal when not, with the resource
 * type's AUTHORIZATION_FAILED code naming the principal, the operation and the resource.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { Operation, ResourceType } from "./acl-rule.js";
import type { Authorizer } from "./authorizer.js";

const REFUSED: Readonly<Record<ResourceType, number>> = {
  topic: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
};

/** True when `authorizer` is null (authorization off). */
export function isAllowed(
  authorizer: Authorizer | null,
  principal: string,
  operation: Operation,
  type: ResourceType,
  name: string,
): boolean {
  return authorizer === null || authorizer.authorize(principal, operation, type, name);
}

export function refusal(
  principal: string,
  operation: Operation,
  type: ResourceType,
  name: string,
): ConchError {
  const what = type === "cluster" ? "the cluster" : `${type} ${JSON.stringify(name)}`;
  return new ConchError(REFUSED[type], `${principal} is not allowed to ${operation} ${what}`);
}

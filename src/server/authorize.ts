/**
 * The ACL check of a request (docs/security.md "Authorization"): once per request and resource,
 * never per message. With authorization off (`ctx.authorization` null, or a source without an
 * authorizer) it is one null check. A refusal is the resource type's error code, naming the
 * principal, the operation and the resource.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { Operation, ResourceType } from "../security/acl-rule.js";
import { ANONYMOUS_PRINCIPAL } from "../security/connection-auth.js";
import type { RequestContext } from "./handler.js";

/** What a check reads of a request's context: any protocol's session can hand in its own. */
export type AuthorizationContext = Pick<RequestContext, "auth" | "authorization">;

const REFUSED: Readonly<Record<ResourceType, number>> = {
  topic: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
};

/** Whether the connection's principal may `operation` the resource (true with authorization off). */
export function allowed(
  ctx: AuthorizationContext,
  operation: Operation,
  type: ResourceType,
  name: string,
): boolean {
  const authorizer = ctx.authorization?.authorizer ?? null;
  if (authorizer === null) return true;
  return authorizer.authorize(ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL, operation, type, name);
}

/** Throws the resource type's AUTHORIZATION_FAILED unless `allowed`. */
export function authorize(
  ctx: AuthorizationContext,
  operation: Operation,
  type: ResourceType,
  name: string,
): void {
  if (allowed(ctx, operation, type, name)) return;
  const principal = ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL;
  const what = type === "cluster" ? "the cluster" : `${type} ${JSON.stringify(name)}`;
  throw new ConchError(REFUSED[type], `${principal} is not allowed to ${operation} ${what}`);
}

/** A topic is created by create on the topic or on the cluster. */
export function authorizeCreateTopic(ctx: AuthorizationContext, topic: string): void {
  if (allowed(ctx, "create", "cluster", "cluster")) return;
  authorize(ctx, "create", "topic", topic);
}

/**
 * The ACL check of a request (docs/security.md "Authorization"): once per request and resource,
 * never per message. With authorization off (`ctx.authorization` null, or a source without an
 * authorizer) it is one null check. A refusal is the resource type's error code, naming the
 * principal, the operation and the resource.
 */
import { isAllowed, refusal } from "../security/access-check.js";
import type { Operation, ResourceType } from "../security/acl-rule.js";
import { ANONYMOUS_PRINCIPAL } from "../security/connection-auth.js";
import type { RequestContext } from "./handler.js";

/** What a check reads of a request's context: any protocol's session can hand in its own. */
export type AuthorizationContext = Pick<RequestContext, "auth" | "authorization">;

/** Whether the connection's principal may `operation` the resource (true with authorization off). */
export function allowed(
  ctx: AuthorizationContext,
  operation: Operation,
  type: ResourceType,
  name: string,
): boolean {
  return isAllowed(
    ctx.authorization?.authorizer ?? null,
    ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL,
    operation,
    type,
    name,
  );
}

/** Throws the resource type's AUTHORIZATION_FAILED unless `allowed`. */
export function authorize(
  ctx: AuthorizationContext,
  operation: Operation,
  type: ResourceType,
  name: string,
): void {
  if (allowed(ctx, operation, type, name)) return;
  throw refusal(ctx.auth?.principal ?? ANONYMOUS_PRINCIPAL, operation, type, name);
}

/** A topic is created by create on the topic or on the cluster. */
export function authorizeCreateTopic(ctx: AuthorizationContext, topic: string): void {
  if (allowed(ctx, "create", "cluster", "cluster")) return;
  authorize(ctx, "create", "topic", topic);
}

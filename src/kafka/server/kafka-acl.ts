/**
 * The ACL check of a Kafka request (docs/security.md "Authorization", docs/kafka.md
 * "Authorization"): the native protocol's `allowed`, answered as Kafka's code for the resource type.
 * Once per request and resource (a topic of a produce, never a record); with authorization off it
 * is one null check.
 */
import type { Operation, ResourceType } from "../../security/acl-rule.js";
import { type AuthorizationContext, allowed } from "../../server/authorize.js";
import { KafkaErrorCode } from "../protocol/error-codes.js";

const REFUSED: Readonly<Record<ResourceType, number>> = {
  topic: KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group: KafkaErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster: KafkaErrorCode.CLUSTER_AUTHORIZATION_FAILED,
};

/** NONE when the connection's principal may `operation` the resource, else the refusal's code. */
export function kafkaRefusal(
  ctx: AuthorizationContext,
  operation: Operation,
  type: ResourceType,
  name: string,
): number {
  return allowed(ctx, operation, type, name) ? KafkaErrorCode.NONE : REFUSED[type];
}

/** A topic is created by create on the cluster or on the topic (as `authorizeCreateTopic`). */
export function mayCreateTopic(ctx: AuthorizationContext, topic: string): boolean {
  return allowed(ctx, "create", "cluster", "cluster") || allowed(ctx, "create", "topic", topic);
}

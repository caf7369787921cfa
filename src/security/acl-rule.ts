/**
 * An ACL rule, as Kafka has them: a principal is allowed or denied an operation on a resource,
 * named literally or by prefix. `conch acl add|list|remove` and the admin API speak these.
 *
 *   principal     `User:<name>` (a SCRAM user, or a certificate subject), or `User:*` for everyone
 *   permission    allow | deny
 *   operation     read | write | create | delete | alter | describe | all
 *   resourceType  topic | group | cluster
 *   patternType   literal (the name, or `*` for every resource of the type) | prefixed
 *   name          a topic name, a group name, or `cluster` (the one cluster resource)
 *
 * Which operations apply to which resource type follows Kafka (docs/security.md has the table).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { MAX_TOPIC_NAME_LENGTH, topicNameProblem } from "../format/topic-name.js";

export const OPERATIONS = ["read", "write", "create", "delete", "alter", "describe"] as const;
export type Operation = (typeof OPERATIONS)[number];
export type AclOperation = Operation | "all";
export const RESOURCE_TYPES = ["topic", "group", "cluster"] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export type PatternType = "literal" | "prefixed";
export type Permission = "allow" | "deny";

/** The name of the one cluster resource. */
export const CLUSTER_RESOURCE = "cluster";
export const WILDCARD = "*";
export const ANY_USER = "User:*";
/** Subjects of long certificate chains run to a few hundred characters; this is far past them. */
export const MAX_PRINCIPAL_LENGTH = 1024;
const MAX_GROUP_NAME_LENGTH = 255;

export interface AclRule {
  readonly principal: string;
  readonly permission: Permission;
  readonly operation: AclOperation;
  readonly resourceType: ResourceType;
  readonly patternType: PatternType;
  readonly name: string;
}

/** The operations a rule on each resource type may name (besides `all`). */
export const OPERATIONS_OF: Record<ResourceType, readonly Operation[]> = {
  topic: OPERATIONS,
  group: ["read", "delete", "describe"],
  cluster: ["create", "alter", "describe"],
};

const CONTROL = /\p{Cc}/u;
const TOPIC_PREFIX = /^[A-Za-z0-9._-]+$/;

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): value is T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value);
}

export function principalProblem(principal: unknown): string | null {
  if (typeof principal !== "string" || !principal.startsWith("User:") || principal.length === 5) {
    return 'principal must be "User:<name>" or "User:*"';
  }
  if (principal.length > MAX_PRINCIPAL_LENGTH)
    return `principal is longer than ${MAX_PRINCIPAL_LENGTH} characters`;
  if (CONTROL.test(principal)) return "principal must not contain control characters";
  return null;
}

function nameProblem(resourceType: ResourceType, patternType: PatternType, name: unknown): string | null {
  if (typeof name !== "string" || name.length === 0) return "resource name must not be empty";
  if (resourceType === "cluster") {
    return patternType === "literal" && name === CLUSTER_RESOURCE
      ? null
      : `a cluster rule names the literal "${CLUSTER_RESOURCE}"`;
  }
  if (name === WILDCARD)
    return patternType === "literal" ? null : `"*" is a literal name (every ${resourceType})`;
  if (resourceType === "topic") {
    // A prefix need not be a whole legal name ("." alone is a fine prefix), only made of its characters.
    if (patternType === "literal") return topicNameProblem(name);
    return TOPIC_PREFIX.test(name) && name.length <= MAX_TOPIC_NAME_LENGTH
      ? null
      : `topic prefix ${JSON.stringify(name.slice(0, 64))} may contain only ASCII letters, digits, '.', '_' and '-'`;
  }
  if (name.length > MAX_GROUP_NAME_LENGTH)
    return `group name is longer than ${MAX_GROUP_NAME_LENGTH} characters`;
  return CONTROL.test(name) ? "group name must not contain control characters" : null;
}

/** What is wrong with `rule` (taken from a file or a request), or null. */
export function aclRuleProblem(rule: unknown): string | null {
  if (typeof rule !== "object" || rule === null) return "a rule must be an object";
  const r = rule as Record<string, unknown>;
  const principal = principalProblem(r.principal);
  if (principal !== null) return principal;
  if (!oneOf(r.permission, ["allow", "deny"] as const)) return 'permission must be "allow" or "deny"';
  if (!oneOf(r.resourceType, RESOURCE_TYPES))
    return `resource type must be one of ${RESOURCE_TYPES.join(", ")}`;
  if (!oneOf(r.patternType, ["literal", "prefixed"] as const))
    return 'pattern type must be "literal" or "prefixed"';
  const allowed = OPERATIONS_OF[r.resourceType];
  if (r.operation !== "all" && !oneOf(r.operation, allowed)) {
    return `operation on a ${r.resourceType} must be one of ${allowed.join(", ")}, all`;
  }
  return nameProblem(r.resourceType, r.patternType, r.name);
}

export function checkAclRule(rule: unknown): asserts rule is AclRule {
  const problem = aclRuleProblem(rule);
  if (problem !== null) throw new ConchError(ErrorCode.INVALID_REQUEST, `Invalid ACL rule: ${problem}`);
}

/** The rule with exactly its six fields (a request may carry more). */
export function normalizeRule(rule: AclRule): AclRule {
  const { principal, permission, operation, resourceType, patternType, name } = rule;
  return { principal, permission, operation, resourceType, patternType, name };
}

/** A string equal for equal rules: stores keep one copy of a rule. */
export function ruleKey(rule: AclRule): string {
  return JSON.stringify([
    rule.principal,
    rule.permission,
    rule.operation,
    rule.resourceType,
    rule.patternType,
    rule.name,
  ]);
}

/** Selects rules for list and remove: every field given must match exactly. */
export type AclFilter = Partial<AclRule>;

export function matchesFilter(rule: AclRule, filter: AclFilter): boolean {
  return (
    (filter.principal === undefined || filter.principal === rule.principal) &&
    (filter.permission === undefined || filter.permission === rule.permission) &&
    (filter.operation === undefined || filter.operation === rule.operation) &&
    (filter.resourceType === undefined || filter.resourceType === rule.resourceType) &&
    (filter.patternType === undefined || filter.patternType === rule.patternType) &&
    (filter.name === undefined || filter.name === rule.name)
  );
}

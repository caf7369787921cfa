/**
 * Decides whether a principal may perform an operation on a resource, from ACL rules, as Kafka's
 * authorizer does when nothing is allowed that no rule allows:
 *
 * 1. a super user may do anything;
 * 2. a matching deny rule refuses, whatever allows it (deny wins);
 * 3. a matching allow rule allows;
 * 4. otherwise refused.
 *
 * A rule matches when its principal is the one asking or `User:*`, its resource type is the one
 * asked about, and its name is the resource's (literal), `*` (literal, every resource of the
 * type), or a prefix of it (prefixed); its operation is the one asked or `all`. As in Kafka, an
 * allow of read, write, delete or alter also allows describe; a deny refuses only what it names.
 *
 * The rules are indexed once, when they change: per principal and resource type, a map of
 * literal names to two bit masks (allowed and denied operations, implications already applied),
 * the masks of `*`, and a map of prefixes with the distinct prefix lengths. A check is then a few
 * map lookups and bit tests, and allocates nothing but the prefixes it looks up. The server checks
 * once per request and partition, never per message.
 */
import {
  type AclRule,
  ANY_USER,
  type Operation,
  RESOURCE_TYPES,
  type ResourceType,
  WILDCARD,
} from "./acl-rule.js";

const BIT: Record<Operation, number> = { read: 1, write: 2, create: 4, delete: 8, alter: 16, describe: 32 };
const ALL_BITS = 63;
/** Kafka's implied operation: allowing any of these allows describe too. */
const IMPLIES_DESCRIBE = BIT.read | BIT.write | BIT.delete | BIT.alter;

interface Masks {
  allow: number;
  deny: number;
}

class ResourceIndex {
  readonly literal = new Map<string, Masks>();
  readonly any: Masks = { allow: 0, deny: 0 };
  readonly prefixes = new Map<string, Masks>();
  /** Distinct prefix lengths, ascending. */
  prefixLengths: number[] = [];
}

function masksOf(map: Map<string, Masks>, name: string): Masks {
  let masks = map.get(name);
  if (masks === undefined) {
    masks = { allow: 0, deny: 0 };
    map.set(name, masks);
  }
  return masks;
}

function ruleBits(rule: AclRule): number {
  if (rule.operation === "all") return ALL_BITS;
  const bit = BIT[rule.operation];
  return rule.permission === "allow" && (bit & IMPLIES_DESCRIBE) !== 0 ? bit | BIT.describe : bit;
}

export interface AuthorizerOptions {
  /** Principals (`User:alice`, a certificate's `User:CN=...`) allowed everything. */
  superUsers?: readonly string[];
}

export class Authorizer {
  readonly rules: readonly AclRule[];
  readonly #superUsers: ReadonlySet<string>;
  /** principal -> one index per resource type, in RESOURCE_TYPES order. */
  readonly #byPrincipal = new Map<string, ResourceIndex[]>();

  constructor(rules: readonly AclRule[], options: AuthorizerOptions = {}) {
    this.rules = rules;
    this.#superUsers = new Set(options.superUsers ?? []);
    for (const rule of rules) {
      let indexes = this.#byPrincipal.get(rule.principal);
      if (indexes === undefined) {
        indexes = RESOURCE_TYPES.map(() => new ResourceIndex());
        this.#byPrincipal.set(rule.principal, indexes);
      }
      const index = indexes[RESOURCE_TYPES.indexOf(rule.resourceType)]!;
      const masks =
        rule.patternType === "prefixed"
          ? masksOf(index.prefixes, rule.name)
          : rule.name === WILDCARD
            ? index.any
            : masksOf(index.literal, rule.name);
      if (rule.permission === "allow") masks.allow |= ruleBits(rule);
      else masks.deny |= ruleBits(rule);
    }
    for (const indexes of this.#byPrincipal.values()) {
      for (const index of indexes) {
        index.prefixLengths = [...new Set([...index.prefixes.keys()].map((p) => p.length))].sort(
          (a, b) => a - b,
        );
      }
    }
  }

  isSuperUser(principal: string): boolean {
    return this.#superUsers.has(principal);
  }

  /** Whether `principal` may perform `operation` on the resource `resourceType`/`name`. */
  authorize(principal: string, operation: Operation, resourceType: ResourceType, name: string): boolean {
    if (this.#superUsers.has(principal)) return true;
    const type = resourceType === "topic" ? 0 : resourceType === "group" ? 1 : 2;
    const bit = BIT[operation];
    const own = this.#byPrincipal.get(principal)?.[type];
    const everyone = principal === ANY_USER ? undefined : this.#byPrincipal.get(ANY_USER)?.[type];
    const denied = deniedOrAllowed(own, name, bit) | deniedOrAllowed(everyone, name, bit);
    return denied === ALLOWED;
  }
}

const ALLOWED = 1;
const DENIED = 3;

/** DENIED if a deny matches, else ALLOWED if an allow matches, else 0 (OR-able across indexes). */
function deniedOrAllowed(index: ResourceIndex | undefined, name: string, bit: number): number {
  if (index === undefined) return 0;
  let allow = index.any.allow;
  let deny = index.any.deny;
  const literal = index.literal.get(name);
  if (literal !== undefined) {
    allow |= literal.allow;
    deny |= literal.deny;
  }
  for (const length of index.prefixLengths) {
    if (length > name.length) break;
    const masks = index.prefixes.get(name.slice(0, length));
    if (masks !== undefined) {
      allow |= masks.allow;
      deny |= masks.deny;
    }
  }
  return (deny & bit) !== 0 ? DENIED : (allow & bit) !== 0 ? ALLOWED : 0;
}

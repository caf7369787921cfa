import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type AclOperation,
  type AclRule,
  aclRuleProblem,
  OPERATIONS,
  OPERATIONS_OF,
  type Operation,
  RESOURCE_TYPES,
  type ResourceType,
} from "../../src/security/acl-rule.js";
import { Authorizer } from "../../src/security/authorizer.js";

function rule(
  principal: string,
  permission: "allow" | "deny",
  operation: AclOperation,
  resourceType: ResourceType,
  name: string,
  patternType: "literal" | "prefixed" = "literal",
): AclRule {
  return { principal, permission, operation, resourceType, patternType, name };
}

const alice = "User:alice";
const sample: Record<ResourceType, string> = { topic: "orders", group: "billing", cluster: "cluster" };

describe("Authorizer", () => {
  test("with no rules nothing is allowed", () => {
    const authorizer = new Authorizer([]);
    for (const type of RESOURCE_TYPES) {
      for (const op of OPERATIONS) assert.equal(authorizer.authorize(alice, op, type, sample[type]), false);
    }
  });

  for (const type of RESOURCE_TYPES) {
    for (const op of OPERATIONS_OF[type]) {
      test(`${op} on a ${type}: allowed by its allow rule, refused when a deny is added, and only that operation`, () => {
        const allow = new Authorizer([rule(alice, "allow", op, type, sample[type])]);
        assert.equal(allow.authorize(alice, op, type, sample[type]), true);
        assert.equal(allow.authorize("User:bob", op, type, sample[type]), false, "another principal");
        if (type !== "cluster")
          assert.equal(allow.authorize(alice, op, type, "other"), false, "another resource");
        for (const other of OPERATIONS) {
          const implied = other === "describe" && ["read", "write", "delete", "alter"].includes(op);
          if (other !== op)
            assert.equal(allow.authorize(alice, other, type, sample[type]), implied, `${other}`);
        }
        for (const otherType of RESOURCE_TYPES) {
          if (otherType !== type) assert.equal(allow.authorize(alice, op, otherType, sample[type]), false);
        }
        const denied = new Authorizer([
          rule(alice, "allow", op, type, sample[type]),
          rule(alice, "deny", op, type, sample[type]),
        ]);
        assert.equal(denied.authorize(alice, op, type, sample[type]), false);
      });
    }
  }

  test("literal names match exactly, prefixed names match what starts with them, * matches all", () => {
    const authorizer = new Authorizer([
      rule(alice, "allow", "read", "topic", "orders"),
      rule(alice, "allow", "write", "topic", "logs.", "prefixed"),
      rule("User:bob", "allow", "read", "group", "*"),
      rule(alice, "allow", "describe", "group", "team-a-", "prefixed"),
      rule(alice, "allow", "describe", "group", "team-", "prefixed"),
    ]);
    assert.equal(authorizer.authorize(alice, "read", "topic", "orders"), true);
    assert.equal(authorizer.authorize(alice, "read", "topic", "orders2"), false);
    assert.equal(authorizer.authorize(alice, "read", "topic", "order"), false);
    assert.equal(authorizer.authorize(alice, "write", "topic", "logs.app"), true);
    assert.equal(authorizer.authorize(alice, "write", "topic", "logs."), true);
    assert.equal(authorizer.authorize(alice, "write", "topic", "logs"), false);
    assert.equal(authorizer.authorize(alice, "write", "topic", "xlogs.app"), false);
    assert.equal(authorizer.authorize("User:bob", "read", "group", "anything"), true);
    assert.equal(authorizer.authorize(alice, "describe", "group", "team-b"), true);
    assert.equal(authorizer.authorize(alice, "describe", "group", "team"), false);
    assert.equal(
      authorizer.authorize(alice, "read", "topic", "*"),
      false,
      "a topic named * is not every topic",
    );
  });

  test("deny wins over allow, from any matching rule: prefixed, wildcard, or User:*", () => {
    const authorizer = new Authorizer([
      rule(alice, "allow", "all", "topic", "*"),
      rule(alice, "deny", "write", "topic", "audit.", "prefixed"),
      rule("User:*", "deny", "delete", "topic", "orders"),
      rule("User:*", "allow", "read", "topic", "public.", "prefixed"),
      rule("User:bob", "deny", "all", "topic", "public.secret"),
    ]);
    assert.equal(authorizer.authorize(alice, "write", "topic", "orders"), true);
    assert.equal(authorizer.authorize(alice, "write", "topic", "audit.log"), false);
    assert.equal(authorizer.authorize(alice, "read", "topic", "audit.log"), true);
    assert.equal(
      authorizer.authorize(alice, "delete", "topic", "orders"),
      false,
      "User:* deny applies to alice",
    );
    assert.equal(
      authorizer.authorize("User:bob", "read", "topic", "public.news"),
      true,
      "User:* allow applies to bob",
    );
    assert.equal(authorizer.authorize("User:bob", "read", "topic", "public.secret"), false);
  });

  test("describe is implied by allowing read, write, delete or alter, not create; a deny refuses only what it names", () => {
    const authorizer = new Authorizer([
      rule(alice, "allow", "create", "topic", "a"),
      rule(alice, "allow", "read", "topic", "b"),
      rule(alice, "deny", "read", "topic", "b"),
      rule(alice, "allow", "all", "topic", "c"),
      rule(alice, "deny", "describe", "topic", "c"),
    ]);
    assert.equal(authorizer.authorize(alice, "describe", "topic", "a"), false);
    assert.equal(authorizer.authorize(alice, "read", "topic", "b"), false);
    assert.equal(authorizer.authorize(alice, "describe", "topic", "b"), true);
    assert.equal(authorizer.authorize(alice, "read", "topic", "c"), true);
    assert.equal(authorizer.authorize(alice, "describe", "topic", "c"), false);
  });

  test("super users may do anything, even what a rule denies; principals are exact strings", () => {
    const authorizer = new Authorizer([rule("User:*", "deny", "all", "topic", "*")], {
      superUsers: ["User:admin", "User:CN=ops,O=acme"],
    });
    for (const op of OPERATIONS) {
      assert.equal(authorizer.authorize("User:admin", op, "topic", "t"), true);
      assert.equal(authorizer.authorize("User:CN=ops,O=acme", op, "cluster", "cluster"), true);
      assert.equal(authorizer.authorize("User:Admin", op, "topic", "t"), false);
    }
  });

  test("agrees with a rule-by-rule reading of the rules, for random rules and questions", () => {
    const names = ["a", "ab", "abc", "b", "*"];
    const principals = ["User:alice", "User:bob", "User:*"];
    const ruleArb = fc
      .record({
        principal: fc.constantFrom(...principals),
        permission: fc.constantFrom("allow" as const, "deny" as const),
        operation: fc.constantFrom<AclOperation>(...OPERATIONS, "all"),
        resourceType: fc.constantFrom<ResourceType>("topic", "group"),
        patternType: fc.constantFrom("literal" as const, "prefixed" as const),
        name: fc.constantFrom(...names),
      })
      .filter((r) => aclRuleProblem(r) === null);
    const question = fc.record({
      principal: fc.constantFrom("User:alice", "User:bob"),
      op: fc.constantFrom<Operation>(...OPERATIONS),
      type: fc.constantFrom<ResourceType>("topic", "group"),
      name: fc.constantFrom("a", "ab", "abc", "b", "c"),
    });
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 12 }),
        fc.array(question, { maxLength: 20 }),
        (rules, questions) => {
          const authorizer = new Authorizer(rules);
          for (const q of questions)
            assert.equal(authorizer.authorize(q.principal, q.op, q.type, q.name), reference(rules, q));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** The rules read one by one, as docs/security.md states them. */
function reference(
  rules: AclRule[],
  q: { principal: string; op: Operation; type: ResourceType; name: string },
): boolean {
  const matching = rules.filter(
    (r) =>
      (r.principal === q.principal || r.principal === "User:*") &&
      r.resourceType === q.type &&
      (r.patternType === "prefixed" ? q.name.startsWith(r.name) : r.name === q.name || r.name === "*"),
  );
  const covers = (r: AclRule, implied: boolean) =>
    r.operation === "all" ||
    r.operation === q.op ||
    (implied && q.op === "describe" && ["read", "write", "delete", "alter"].includes(r.operation));
  if (matching.some((r) => r.permission === "deny" && covers(r, false))) return false;
  return matching.some((r) => r.permission === "allow" && covers(r, true));
}

describe("ACL rule checks", () => {
  const bad: [string, Partial<AclRule>, RegExp][] = [
    ["a principal without User:", { principal: "alice" }, /User:<name>/],
    ["an empty principal name", { principal: "User:" }, /User:<name>/],
    ["a principal with a newline", { principal: "User:a\nb" }, /control/],
    ["an unknown permission", { permission: "maybe" as "allow" }, /allow" or "deny/],
    ["an unknown operation", { operation: "fly" as "read" }, /must be one of/],
    [
      "write on a group",
      { resourceType: "group", operation: "write", name: "g" },
      /on a group must be one of read, delete, describe, all/,
    ],
    ["read on the cluster", { resourceType: "cluster", operation: "read", name: "cluster" }, /on a cluster/],
    [
      "a cluster by another name",
      { resourceType: "cluster", operation: "alter", name: "kafka" },
      /literal "cluster"/,
    ],
    ["a prefixed *", { patternType: "prefixed", name: "*" }, /"\*" is a literal name/],
    ["a topic name with a slash", { name: "../etc" }, /may contain only/],
    ["a topic prefix with a space", { patternType: "prefixed", name: "a b" }, /topic prefix/],
    ["an empty name", { name: "" }, /must not be empty/],
    ["an unknown resource type", { resourceType: "host" as "topic" }, /resource type/],
  ];
  for (const [what, change, reason] of bad) {
    test(`refuses ${what}`, () => {
      assert.match(
        aclRuleProblem({ ...rule(alice, "allow", "read", "topic", "orders"), ...change }) ?? "",
        reason,
      );
    });
  }

  test("accepts every operation on its resource types, and all", () => {
    for (const type of RESOURCE_TYPES) {
      for (const op of [...OPERATIONS_OF[type], "all" as const]) {
        assert.equal(aclRuleProblem(rule("User:*", "deny", op, type, sample[type])), null);
      }
    }
  });
});

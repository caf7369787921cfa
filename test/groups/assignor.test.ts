/** The assignment strategies: fixed tables, and the invariants for arbitrary members and topics. */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type Assignment, assignPartitions, parseStrategy } from "../../src/broker/group-assignor.js";
import { ErrorCode } from "../../src/format/errors.js";
import { conchError } from "./helpers.js";

/** The assignment as { member: { topic: partitions } }, members with nothing included. */
function table(a: Assignment): Record<string, Record<string, number[]>> {
  const out: Record<string, Record<string, number[]>> = {};
  for (const [member, topics] of a) out[member] = Object.fromEntries(topics);
  return out;
}

const counts =
  (c: Record<string, number>) =>
  (topic: string): number =>
    c[topic] ?? 0;

test("range: contiguous runs per topic, the first members take the remainder", () => {
  const three = [
    { id: "c", topics: ["t"] },
    { id: "a", topics: ["t"] },
    { id: "b", topics: ["t"] },
  ];
  assert.deepEqual(table(assignPartitions("range", three, counts({ t: 6 }))), {
    a: { t: [0, 1] },
    b: { t: [2, 3] },
    c: { t: [4, 5] },
  });
  assert.deepEqual(table(assignPartitions("range", three, counts({ t: 7 }))), {
    a: { t: [0, 1, 2] },
    b: { t: [3, 4] },
    c: { t: [5, 6] },
  });
  assert.deepEqual(table(assignPartitions("range", three, counts({ t: 2 }))), {
    a: { t: [0] },
    b: { t: [1] },
    c: {},
  });
  // Per topic: with two topics of 3 partitions over 2 members, a takes two of each.
  const two = [
    { id: "a", topics: ["t", "u"] },
    { id: "b", topics: ["t", "u"] },
  ];
  assert.deepEqual(table(assignPartitions("range", two, counts({ t: 3, u: 3 }))), {
    a: { t: [0, 1], u: [0, 1] },
    b: { t: [2], u: [2] },
  });
});

test("roundrobin: partitions dealt in turn over all topics, skipping members not subscribed", () => {
  const two = [
    { id: "a", topics: ["t", "u"] },
    { id: "b", topics: ["t", "u"] },
  ];
  assert.deepEqual(table(assignPartitions("roundrobin", two, counts({ t: 3, u: 3 }))), {
    a: { t: [0, 2], u: [1] },
    b: { t: [1], u: [0, 2] },
  });
  // c reads only u: t goes to a and b alone, then u continues the turn order.
  const mixed = [
    { id: "a", topics: ["t", "u"] },
    { id: "b", topics: ["t", "u"] },
    { id: "c", topics: ["u"] },
  ];
  assert.deepEqual(table(assignPartitions("roundrobin", mixed, counts({ t: 3, u: 4 }))), {
    a: { t: [0, 2], u: [2] },
    b: { t: [1], u: [0, 3] },
    c: { u: [1] },
  });
});

test("a topic that does not exist assigns nothing", () => {
  const members = [{ id: "a", topics: ["missing"] }];
  assert.deepEqual(table(assignPartitions("range", members, counts({}))), { a: {} });
  assert.deepEqual(table(assignPartitions("roundrobin", members, counts({}))), { a: {} });
});

test("unknown strategies are refused", () => {
  assert.equal(parseStrategy("range"), "range");
  assert.equal(parseStrategy("roundrobin"), "roundrobin");
  assert.throws(() => parseStrategy("sticky"), conchError(ErrorCode.INVALID_REQUEST, /sticky/));
});

test("both strategies: every partition to exactly one subscribed member, balanced per topic for range", () => {
  const topicNames = ["t0", "t1", "t2"];
  const arb = fc.record({
    counts: fc.tuple(fc.nat(12), fc.nat(12), fc.nat(12)),
    members: fc.array(fc.subarray(topicNames, { minLength: 1 }), { minLength: 1, maxLength: 6 }),
    strategy: fc.constantFrom("range" as const, "roundrobin" as const),
  });
  fc.assert(
    fc.property(arb, ({ counts: c, members, strategy }) => {
      const subscribers = members.map((topics, i) => ({ id: `m${i}`, topics: [...topics].sort() }));
      const n = (topic: string): number => c[topicNames.indexOf(topic)] ?? 0;
      const a = assignPartitions(strategy, subscribers, n);
      assert.equal(a.size, subscribers.length);
      for (const topic of topicNames) {
        const subscribed = subscribers.filter((s) => s.topics.includes(topic));
        const owners = new Map<number, string>();
        for (const [member, owned] of a) {
          for (const p of owned.get(topic) ?? []) {
            assert.equal(owners.has(p), false, `${topic}/${p} assigned twice`);
            assert.ok(
              subscribed.some((s) => s.id === member),
              `${member} got ${topic}/${p} without subscribing`,
            );
            owners.set(p, member);
          }
        }
        const expected = subscribed.length === 0 ? 0 : n(topic);
        assert.equal(owners.size, expected, `every partition of ${topic} is owned`);
        if (strategy === "range" && subscribed.length > 0) {
          const sizes = subscribed.map((s) => a.get(s.id)!.get(topic)?.length ?? 0);
          assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, "range is balanced per topic");
        }
      }
    }),
    { numRuns: 200 },
  );
});

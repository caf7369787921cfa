import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { PendingTable } from "../../src/client/pending-table.js";

test("PendingTable: sequential ids, taken in any order, with some outliving many laps of the ring", () => {
  // Each step either sends the next id or answers one of those in flight (or an unknown id).
  const step = fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "add" as const, pick: 0 }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("take" as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("stray" as const), pick: fc.nat() }) },
  );
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 1000, maxLength: 3000 }),
      fc.nat(0xffffffff),
      (steps, firstId) => {
        const table = new PendingTable<{ id: number }>();
        const model = new Map<number, { id: number }>();
        let id = firstId;
        for (const s of steps) {
          if (s.kind === "add") {
            const e = { id };
            table.add(e);
            model.set(id, e);
            id = id === 0xffffffff ? 1 : id + 1;
          } else if (s.kind === "take") {
            const keys = [...model.keys()];
            if (keys.length === 0) continue;
            // Mostly the newest ones, so that old ones stay behind for many laps.
            const k = keys[keys.length - 1 - (s.pick % Math.min(keys.length, 4))]!;
            assert.equal(table.take(k), model.get(k));
            model.delete(k);
          } else {
            const stray = id + 1 + (s.pick % 1000);
            assert.equal(table.take(stray), undefined);
          }
          assert.equal(table.size, model.size);
        }
        assert.deepEqual(
          table
            .entries()
            .map((e) => e.id)
            .sort((a, b) => a - b),
          [...model.keys()].sort((a, b) => a - b),
        );
        const all = table.clear();
        assert.equal(all.length, model.size);
        assert.equal(table.size, 0);
        for (const k of model.keys()) assert.equal(table.take(k), undefined);
      },
    ),
    { numRuns: 60 },
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { SlotList, type Slotted } from "../../src/client/slot-list.js";

test("SlotList: adds, deletes (present or not, repeated) and membership agree with a Set", () => {
  const op = fc.record({ add: fc.boolean(), pick: fc.nat(11) });
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 400 }), (ops) => {
      const members: Slotted[] = Array.from({ length: 12 }, () => ({ listSlot: -1 }));
      // Two lists: a member of one is not a member of the other.
      const list = new SlotList<Slotted>();
      const other = new SlotList<Slotted>();
      const model = new Set<Slotted>();
      const outsider: Slotted = { listSlot: -1 };
      other.add(outsider);
      for (const { add, pick } of ops) {
        const m = members[pick]!;
        if (add) {
          list.add(m);
          model.add(m);
        } else {
          list.delete(m);
          model.delete(m);
        }
        assert.equal(list.size, model.size);
        for (const x of members) assert.equal(list.has(x), model.has(x));
        assert.equal(list.has(outsider), false);
        list.delete(outsider);
        assert.equal(other.has(outsider), true);
        assert.deepEqual(new Set(list.items), model);
        for (const [i, x] of list.items.entries()) assert.equal(x.listSlot, i);
      }
    }),
  );
});

test("SlotList: a loop from the end may delete the member it is at", () => {
  const list = new SlotList<Slotted & { n: number }>();
  for (let n = 0; n < 10; n++) list.add({ listSlot: -1, n });
  const seen: number[] = [];
  const items = list.items;
  for (let i = items.length - 1; i >= 0; i--) {
    const x = items[i]!;
    seen.push(x.n);
    if (x.n % 2 === 0) list.delete(x);
  }
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.deepEqual(
    list.items.map((x) => x.n).sort((a, b) => a - b),
    [1, 3, 5, 7, 9],
  );
});

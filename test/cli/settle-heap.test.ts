import assert from "node:assert/strict";
import { test } from "node:test";
import { settleHeap } from "../../src/cli/settle-heap.js";

test("settleHeap runs a full collection without exposing gc to the application's context", () => {
  const hadGc = "gc" in globalThis;
  // A weakly held object with nothing else referring to it is gone after a full collection.
  let target: object | null = { big: new Array(1000).fill(0) };
  const ref = new WeakRef(target);
  target = null;
  return new Promise<void>((resolve) => {
    // WeakRef targets survive until the current job ends; collect in a later one.
    setImmediate(() => {
      settleHeap();
      assert.equal(ref.deref(), undefined, "a full collection ran");
      assert.equal("gc" in globalThis, hadGc, "the main context did not gain a gc function");
      resolve();
    });
  });
});

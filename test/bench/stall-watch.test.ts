import assert from "node:assert/strict";
import { test } from "node:test";
import { STALL_MS, watchStalls } from "../../bench/suite/stall-watch.js";

test("a stall of the harness's process is counted, with its length", async () => {
  const stop = watchStalls();
  await new Promise((resolve) => setTimeout(resolve, 30));
  // Held off for 150 ms, as a machine that stops every process would hold it.
  const until = performance.now() + 150;
  while (performance.now() < until) {
    // busy
  }
  await new Promise((resolve) => setTimeout(resolve, 30));
  const seen = stop();
  assert.ok(seen.count >= 1, `stalls counted: ${seen.count}`);
  assert.ok(seen.longestMs >= 150 - 10 - 1 && seen.longestMs >= STALL_MS, `longest ${seen.longestMs} ms`);
});

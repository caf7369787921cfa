import assert from "node:assert/strict";
import { test } from "node:test";
import { joinBuffers } from "../../src/net/socket-writes.js";

test("joinBuffers copies the first `count` buffers in order and nothing after them", () => {
  const parts = [Buffer.from("head"), Buffer.alloc(0), Buffer.from("-body-"), Buffer.from("stale")];
  const joined = joinBuffers(parts, 3, 10);
  assert.equal(joined.toString(), "head-body-");
  // A copy: the parts may be reused once the write is made.
  parts[0]!.fill(0);
  assert.equal(joined.toString(), "head-body-");
});

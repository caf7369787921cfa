import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { test } from "node:test";
import { logOffsetResets } from "../../src/cli/consume-command.js";
import type { OffsetResetEvent } from "../../src/client/group-consumer.js";

test("consume --group: a group's offsetReset event is one line on stderr", () => {
  const group = new EventEmitter();
  const lines: string[] = [];
  logOffsetResets(group, (line) => lines.push(line));
  const e: OffsetResetEvent = { topic: "orders", partition: 2, committed: 17, offset: 40 };
  group.emit("offsetReset", e);
  assert.deepEqual(lines, [
    "orders partition 2: committed offset 17 was deleted by retention; reading from 40",
  ]);
});

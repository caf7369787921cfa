import assert from "node:assert/strict";
import { test } from "node:test";
import { formatLogLine } from "../../src/cli/pretty-log.js";

test("a JSON log line becomes one readable line", () => {
  const time = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
  const line = JSON.stringify({
    level: 40,
    time,
    pid: 1,
    msg: "segment recovered",
    topic: "orders",
    bytes: 120,
  });
  assert.equal(
    formatLogLine(`${line}\n`, false),
    "03:04:05.678 WARN  segment recovered  topic=orders  bytes=120\n",
  );
});

test("values with spaces are quoted; errors show their stack below", () => {
  const line = JSON.stringify({
    level: 50,
    time: 0,
    msg: "failed",
    path: "a b",
    err: { stack: "Error: x\n  at y" },
  });
  assert.equal(
    formatLogLine(line, false),
    '00:00:00.000 ERROR failed  path="a b"\n    Error: x\n      at y\n',
  );
});

test("colour only when asked; text that is not JSON passes through", () => {
  assert.ok(formatLogLine(JSON.stringify({ level: 30, time: 0, msg: "m" }), true).includes("\u001b[32mINFO"));
  assert.equal(formatLogLine("not json", true), "not json\n");
});

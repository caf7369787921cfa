/**
 * Usage errors exit 2 everywhere (src/cli/exit-codes.ts), also those only the command can see
 * (options that do not go together), and they are found before any broker is asked: the broker
 * given here does not exist.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runConch } from "./cli-harness.js";

const NOWHERE = ["--broker", "127.0.0.1:1"];

test("consume --group with --partition is a usage error: one line, exit 2, no broker asked", async () => {
  const r = await runConch(["consume", "orders", "--group", "g", "--partition", "0", ...NOWHERE]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "error: --group and --partition do not go together: the group assigns partitions\n");
});

test("consume --group with --from at an offset is a usage error, exit 2", async () => {
  const r = await runConch(["consume", "orders", "--group", "g", "--from", "5", ...NOWHERE]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^error: with --group, --from is earliest or latest/);
});

test("commander's usage errors exit 2 too", async () => {
  const r = await runConch(["consume", "orders", "--bogus", ...NOWHERE]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "error: unknown option '--bogus'\n");
});

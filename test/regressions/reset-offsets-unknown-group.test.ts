/**
 * `conch group reset-offsets` on a group that does not exist used to create it (a mistyped name
 * became a group with committed offsets). It is refused with UNKNOWN_GROUP, in the dry run (the
 * default) and with --execute, and no group appears.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { useSharedBroker } from "../cli/cli-harness.js";

const shared = useSharedBroker();

test("reset-offsets on a group that does not exist is refused with UNKNOWN_GROUP and creates nothing", async () => {
  assert.equal((await shared.conch(["topic", "create", "orders"])).code, 0);
  for (const mode of [[], ["--execute"], ["--dry-run"]]) {
    const r = await shared.conch([
      "group",
      "reset-offsets",
      "typo",
      "--topic",
      "orders",
      "--to",
      "earliest",
      ...mode,
    ]);
    assert.equal(r.code, 1, `${mode.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, 'error: there is no group "typo" (UNKNOWN_GROUP)\n');
  }
  const list = await shared.conch(["group", "list"]);
  assert.equal(list.stdout, "GROUP  KIND  STATE  MEMBERS\n", "no group was created");
});

test("reset-offsets: --dry-run and --execute together are a usage error", async () => {
  const r = await shared.conch([
    "group",
    "reset-offsets",
    "g",
    "--topic",
    "orders",
    "--to",
    "0",
    "--dry-run",
    "--execute",
  ]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "error: --dry-run and --execute do not go together\n");
});

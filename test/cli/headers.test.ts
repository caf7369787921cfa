/**
 * `conch produce --header` / `--null-empty` and `conch consume --format json` with headers, null
 * keys and null values, through a real broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { useSharedBroker } from "./cli-harness.js";

const shared = useSharedBroker();
const conch = shared.conch;

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const { timestamp: _, ...r } = JSON.parse(l) as Record<string, unknown>;
      return r;
    });
}

test("produce --header adds headers in order, repeats kept; consume --format json shows them", async () => {
  assert.equal((await conch(["topic", "create", "hdr"])).code, 0);
  const produced = await conch(
    ["produce", "hdr", "-k", ":", "-H", "source=cli", "--header", "x=1", "-H", "x=", "-H", "eq=a=b"],
    "user-7:login\nplain\n",
  );
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await conch(["consume", "hdr", "--format", "json", "-n", "2"]);
  assert.equal(consumed.code, 0, consumed.stderr);
  const headers = [
    { key: "source", value: "cli" },
    { key: "x", value: "1" },
    { key: "x", value: "" },
    { key: "eq", value: "a=b" },
  ];
  assert.deepEqual(jsonLines(consumed.stdout), [
    { topic: "hdr", partition: 0, offset: 0, key: "user-7", value: "login", headers },
    { topic: "hdr", partition: 0, offset: 1, key: null, value: "plain", headers },
  ]);
  // --format value is unchanged by headers.
  const values = await conch(["consume", "hdr", "-n", "2"]);
  assert.equal(values.stdout, "login\nplain\n");
});

test("produce --header without '=' is a usage error and sends nothing", async () => {
  await conch(["topic", "create", "hdr-bad"]);
  const r = await conch(["produce", "hdr-bad", "-H", "novalue"], "x\n");
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /expected key=value/);
  const after = await conch(["consume", "hdr-bad", "--timeout-ms", "300"]);
  assert.equal(after.stdout, "");
});

test("--null-empty sends an empty value as null (a tombstone with a key); without it, empty is empty", async () => {
  await conch(["topic", "create", "tomb"]);
  assert.equal((await conch(["produce", "tomb", "-k", ":"], "a:\n:\n")).code, 0);
  assert.equal((await conch(["produce", "tomb", "-k", ":", "--null-empty"], "a:\nb:1\n\n")).code, 0);
  const consumed = await conch(["consume", "tomb", "--format", "json", "-n", "5"]);
  assert.deepEqual(
    jsonLines(consumed.stdout).map((r) => [r.key, r.value, "headers" in r]),
    [
      ["a", "", false],
      [null, "", false],
      ["a", null, false],
      ["b", "1", false],
      [null, null, false],
    ],
  );
});

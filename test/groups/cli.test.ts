/** `conch group ...` and `conch consume --group` as a person would run them, against a real broker. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { GroupConsumer } from "../../src/client/group-consumer.js";
import { fill, serve } from "./helpers.js";

const CONCH = fileURLToPath(new URL("../../../bin/conch.js", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `conch args...` to completion (killed after 30 s, as a safety net). */
function conch(...args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env.CONCH_BROKER;
  const child = spawn(process.execPath, [CONCH, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const lines = (text: string): string[] => text.split("\n").filter((l) => l !== "");

test("conch consume --group resumes where the group stopped; conch group list, describe, reset-offsets, delete", async (t) => {
  const served = await serve(t);
  const { broker, address } = served;
  await broker.createTopic("orders", 2);
  const all = await fill(broker, "orders", 2, 4);
  const b = ["--broker", address];

  const first = await conch("consume", "orders", "--group", "cli", "-n", "3", ...b);
  assert.equal(first.code, 0, first.stderr);
  const second = await conch("consume", "orders", "--group", "cli", "-n", "3", ...b);
  assert.equal(second.code, 0, second.stderr);
  const third = await conch("consume", "orders", "--group", "cli", "--timeout-ms", "300", ...b);
  assert.equal(third.code, 0, third.stderr);
  const printed = [...lines(first.stdout), ...lines(second.stdout), ...lines(third.stdout)];
  assert.equal(lines(first.stdout).length, 3);
  assert.equal(lines(second.stdout).length, 3);
  assert.deepEqual(printed.sort(), [...all].sort(), "each message printed once across the three runs");

  const list = await conch("group", "list", ...b);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    lines(list.stdout).map((l) => l.split(/\s+/)),
    [
      ["GROUP", "KIND", "STATE", "MEMBERS"],
      ["cli", "native", "Empty", "0"],
    ],
  );

  // A member in the group: describe shows it; reset-offsets is refused.
  const reader = served.track(
    new GroupConsumer({ brokers: [address], clientId: "reader" }, { group: "cli", topics: ["orders"] }),
  );
  await reader.ready();
  const described = await conch("group", "describe", "cli", ...b);
  assert.equal(described.code, 0, described.stderr);
  const out = lines(described.stdout);
  assert.ok(out.includes("state: Stable"), described.stdout);
  assert.ok(out.includes("members: 1"), described.stdout);
  const member = out.find((l) => l.startsWith(reader.memberId));
  assert.ok(member?.includes("reader") && member.includes("orders:0,1"), described.stdout);
  const rows = out.filter((l) => l.startsWith("orders")).map((l) => l.split(/\s+/));
  assert.deepEqual(rows, [
    ["orders", "0", reader.memberId, "4", "4", "0"],
    ["orders", "1", reader.memberId, "4", "4", "0"],
  ]);
  const refused = await conch(
    "group",
    "reset-offsets",
    "cli",
    "--topic",
    "orders",
    "--to",
    "earliest",
    "--execute",
    ...b,
  );
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /GROUP_NOT_EMPTY/);
  await reader.close();

  const plan = await conch("group", "reset-offsets", "cli", "--topic", "orders", "--to", "1", ...b);
  assert.equal(plan.code, 0, plan.stderr);
  assert.deepEqual(
    lines(plan.stdout).map((l) => l.split(/\s+/)),
    [
      ["TOPIC", "PARTITION", "CURRENT", "NEW"],
      ["orders", "0", "4", "1"],
      ["orders", "1", "4", "1"],
    ],
  );
  assert.match(plan.stderr, /dry run: nothing changed/);
  const reset = await conch(
    "group",
    "reset-offsets",
    "cli",
    "--topic",
    "orders",
    "--to",
    "1",
    "--execute",
    ...b,
  );
  assert.equal(reset.code, 0, reset.stderr);
  assert.deepEqual(lines(reset.stdout), ["orders 0 1", "orders 1 1"]);
  const again = await conch("consume", "orders", "--group", "cli", "--timeout-ms", "300", ...b);
  assert.deepEqual(lines(again.stdout).sort(), [...all].filter((v) => !v.endsWith("-0")).sort());

  const wrong = await conch("consume", "orders", "--group", "cli", "--partition", "0", ...b);
  assert.equal(wrong.code, 2, "a usage error");
  assert.match(wrong.stderr, /--group and --partition/);

  const deleted = await conch("group", "delete", "cli", ...b);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stderr, /deleted group cli/);
  assert.deepEqual(lines((await conch("group", "list", ...b)).stdout), ["GROUP  KIND  STATE  MEMBERS"]);
});

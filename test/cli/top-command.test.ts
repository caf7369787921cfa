/**
 * `conch top` against a real broker process: plain text when stdout is not a terminal, one view with
 * --once and one per interval without it, errors for an unreachable port, and its options in
 * docs/cli.md.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { buildProgram } from "../../src/cli/main.js";
import { useLiveBroker } from "../console/helpers.js";
import { CONCH, collect, runConch, spawnConch } from "./cli-harness.js";

const live = useLiveBroker();

test("conch top --once prints the topics with their rates and the groups with their lag", async () => {
  const { client, http, base } = live();
  await client.admin().createTopic("payments", { partitions: 2 });
  const producer = client.producer();
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => producer.send("payments", { value: `p${i}`, partition: i % 2 })),
  );
  await producer.close();
  // A group exists once it has committed; a reset never creates one.
  await client.groups().commitOffsets("ledger", [{ topic: "payments", partition: 0, offset: 0 }]);
  const reset = await fetch(`${base}/api/v1/groups/ledger/reset-offsets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ topic: "payments", to: "offset", offset: 5 }),
  });
  assert.equal(reset.status, 200);

  const r = await runConch(["top", "--http", http, "--once"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.match(lines[0]!, /^# \d{4}-\d\d-\d\dT[\d:.]+Z 127\.0\.0\.1:\d+$/);
  assert.match(lines[1]!, /^TOPIC\s+PARTITIONS\s+MESSAGES\s+IN MSG\/S\s+OUT MSG\/S\s+IN B\/S\s+OUT B\/S$/);
  assert.ok(
    lines.some((l) => /^payments\s+2\s+50\s+\d+\s+\d+\s+/.test(l)),
    r.stdout,
  );
  assert.ok(!r.stdout.includes("__"), "internal topics are left out");
  // 50 messages over 2 partitions, the group committed offset 5 on each: 50 - 2 * 5.
  assert.ok(
    lines.some((l) => /^ledger\s+Empty\s+0\s+40\s+-$/.test(l)),
    r.stdout,
  );
  assert.ok(!r.stdout.includes("\x1b["), "no terminal escapes when stdout is not a terminal");
});

test("conch top without --once prints a view per interval until stopped", async () => {
  const { http } = live();
  const child = spawnConch(["top", "--http", http, "--interval-ms", "200"]);
  let views = 0;
  child.stdout!.on("data", (b: Buffer) => {
    const before = views;
    views += (b.toString().match(/^# /gm) ?? []).length;
    if (before < 2 && views >= 2) child.kill("SIGINT");
  });
  const r = await collect(child, 20_000);
  assert.ok(views >= 2, `two views, got ${views}: ${r.stdout}`);
  assert.equal(r.code, 0, `SIGINT ends it cleanly: ${r.stderr}`);
  const stamps = [...r.stdout.matchAll(/^# (\S+)/gm)].map((m) => m[1]!);
  assert.notEqual(stamps[0], stamps[1], "each view is a new snapshot");
});

test("on a terminal, conch top redraws the screen in place", async (t) => {
  // util-linux's script(1) gives the command a pseudo-terminal.
  if (!existsSync("/usr/bin/script")) return t.skip("script(1) is not installed");
  const { http } = live();
  const command = `${process.execPath} ${CONCH} top --http ${http} --interval-ms 200`;
  const child = spawn("/usr/bin/script", ["-qfec", command, "/dev/null"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let done = false;
  child.stdout!.on("data", (b: Buffer) => {
    out += b.toString();
    if (!done && out.split("\x1b[H\x1b[2J").length > 2) {
      done = true;
      child.kill("SIGTERM");
    }
  });
  const r = await collect(child, 20_000);
  const screens = out.split("\x1b[H\x1b[2J").slice(1);
  assert.ok(screens.length >= 2, `two redraws: ${JSON.stringify(out)} ${r.stderr}`);
  assert.match(screens[0]!, /^conch top {2}127\.0\.0\.1:\d+ {2}\S+ {2}\(Ctrl-C to quit\)\r?\n/);
  assert.match(screens[0]!, /TOPIC +PARTITIONS/);
  assert.doesNotMatch(out, /^# /m, "no plain-text headers on a terminal");
});

test("conch top fails clearly when nothing answers on the HTTP port, and checks its options", async () => {
  const r = await runConch(["top", "--http", "127.0.0.1:1", "--once"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: cannot read the event feed at 127\.0\.0\.1:1: .*ECONNREFUSED/m);
  const bad = await runConch(["top", "--interval-ms", "5"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--interval-ms/);
  const badHost = await runConch(["top", "--http", "a:b:c"]);
  assert.equal(badHost.code, 2);
});

test("docs/cli.md documents every option of conch top", () => {
  const doc = readFileSync(new URL("../../../docs/cli.md", import.meta.url), "utf8");
  const start = doc.indexOf("\n## conch top\n");
  assert.ok(start >= 0, 'docs/cli.md has a "## conch top" section');
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const top = buildProgram().commands.find((c) => c.name() === "top")!;
  for (const option of top.options) {
    if (option.long === "--help") continue;
    assert.match(section, new RegExp(`\\| \`${option.long}[ \`]`), `${option.long} has a row`);
  }
});

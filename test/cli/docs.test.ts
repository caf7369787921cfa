import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Command } from "commander";
import { BROKER_SETTINGS } from "../../src/broker/broker-settings.js";
import { withClientSecurity } from "../../src/cli/client-security-options.js";
import { buildProgram } from "../../src/cli/main.js";

const doc = readFileSync(new URL("../../../docs/cli.md", import.meta.url), "utf8");

/** The section of docs/cli.md from `## conch <name>` to the next `## `. */
function section(name: string): string {
  const start = doc.indexOf(`\n## conch ${name}\n`);
  assert.ok(start >= 0, `docs/cli.md has a "## conch ${name}" section`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The client commands' TLS and SASL options. */
const shared = new Set(withClientSecurity(new Command()).options.map((o) => o.long ?? ""));

function leaves(command: Command, path: string[] = []): Array<[string[], Command]> {
  const subs = command.commands.filter((c) => c.name() !== "help");
  if (subs.length === 0) return [[path, command]];
  return subs.flatMap((c) => leaves(c, [...path, c.name()]));
}

test("docs/cli.md documents every option of the commands it covers", () => {
  const program = buildProgram();
  for (const name of ["broker", "topic", "produce", "consume", "bench"]) {
    // (`conch group` has one table for its subcommands; see the test below.)
    const text = section(name);
    const command = program.commands.find((c) => c.name() === name)!;
    for (const [path, leaf] of leaves(command, [name])) {
      for (const option of leaf.options) {
        // --broker and the TLS and SASL options are described once, under Conventions.
        if (option.long === "--help" || option.long === "--broker" || shared.has(option.long ?? "")) continue;
        // A table row whose first cell starts with the flag: | `--topic <name>` | or | `-p, --partitions <n>` |
        const row = new RegExp(`\\| \`(-\\w, )?${option.long}[ \`]`);
        assert.match(text, row, `conch ${path.join(" ")} ${option.long} has a row in docs/cli.md`);
      }
    }
  }
});

test("docs/cli.md describes the TLS and SASL options of client commands under Conventions", () => {
  const conventions = doc.slice(doc.indexOf("\n## Conventions\n"), doc.indexOf("\n## conch broker\n"));
  for (const flag of shared)
    assert.match(conventions, new RegExp(`\\| \`${flag}[ \`]`), `${flag} under Conventions`);
});

test("docs/cli.md has every command", () => {
  for (const command of buildProgram().commands) {
    if (command.name() === "help") continue;
    section(command.name());
    for (const [path] of leaves(command, [command.name()])) {
      if (path.length > 1)
        assert.ok(doc.includes(`${path.slice(1).join(" ")}`), `conch ${path.join(" ")} in docs/cli.md`);
    }
  }
});

test("docs/cli.md describes --broker and CONCH_BROKER", () => {
  assert.match(doc, /`-b, --broker <host:port>`[^\n]*\n[^\n]*`CONCH_BROKER`/);
});

test("docs/cli.md lists every broker setting with its environment variable", () => {
  const text = section("broker");
  for (const s of BROKER_SETTINGS) {
    assert.ok(
      text.includes(`| \`${s.option}\` | \`${s.env}\` |`),
      `${s.option} / ${s.env} row in docs/cli.md`,
    );
  }
});

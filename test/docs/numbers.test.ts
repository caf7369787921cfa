// The numbers the docs print (API keys, error codes, which codes are retriable, which layer imports
// which) are checked against the code, so that a new request, code or import cannot leave them wrong.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode, isRetriable } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";

const root = new URL("../../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

/** The section of a markdown document from its `## title` line to the next `## ` heading. */
function section(doc: string, title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `a "## ${title}" section`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** `CREATE_TOPIC` -> `CreateTopic`: how the docs name a request. */
function pascal(name: string): string {
  return name
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

const protocol = read("docs/protocol.md");
const apiByName = new Map(Object.entries(ApiKey).map(([name, key]) => [pascal(name), key]));

test("docs/protocol.md's table of requests lists every apiKey with its number", () => {
  const rows = new Map<string, number>();
  for (const m of section(protocol, "Requests").matchAll(/^\| (\d+) \| ([A-Z][A-Za-z]+) \| `/gm)) {
    rows.set(m[2]!, Number(m[1]));
  }
  assert.deepEqual(rows, apiByName);
});

test("every request docs/protocol.md names with a number (`10 StreamCredit`) has that number", () => {
  let seen = 0;
  for (const m of protocol.matchAll(/\b(\d+) ([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b/g)) {
    const key = apiByName.get(m[2]!);
    if (key === undefined) continue;
    seen++;
    assert.equal(Number(m[1]), key, `"${m[0]}" in docs/protocol.md: ${m[2]} is ${key}`);
  }
  assert.ok(seen >= apiByName.size, `the headings alone name every request (${seen} found)`);
});

test("docs/protocol.md's error table lists every code a broker sends, with its number", () => {
  const errors = section(protocol, "Errors");
  const documented = new Map<string, number>();
  for (const m of errors.matchAll(/^\| (\d+) \| ([A-Z_]+) \|/gm)) documented.set(m[2]!, Number(m[1]));
  // A range row names its codes inline: `UNKNOWN_MEMBER 30, ILLEGAL_GENERATION 31, ...`.
  for (const row of errors.matchAll(/^\| \d+-\d+ \|[^\n]*$/gm)) {
    for (const m of row[0].matchAll(/\b([A-Z][A-Z_]+) (\d+)\b/g)) documented.set(m[1]!, Number(m[2]));
  }
  const sent = Object.entries(ErrorCode).filter(([, code]) => code < 100);
  assert.deepEqual(documented, new Map(sent));
});

const client = read("docs/client.md");

test("docs/client.md lists the codes only clients make, and which are retriable", () => {
  const errors = section(client, "Errors");
  const documented = new Map<string, number>();
  for (const m of errors.matchAll(/^\| (\d+) \| `([A-Z_]+)` \| [^|]+ \| (yes|no) \|$/gm)) {
    documented.set(m[2]!, Number(m[1]));
    assert.equal(m[3] === "yes", isRetriable(Number(m[1])), `${m[2]}'s retriable cell`);
  }
  const clientOnly = Object.entries(ErrorCode).filter(([, code]) => code >= 100);
  assert.deepEqual(documented, new Map(clientOnly));
  const count = ["One", "Two", "Three", "Four", "Five", "Six"][clientOnly.length - 1];
  assert.match(errors, new RegExp(`${count} are made by the client`));

  const sentence = /Retriable errors are ([^(]+)\(`isRetriable\(code\)`\)/.exec(errors);
  assert.ok(sentence, "the sentence that lists the retriable codes");
  const listed = [...sentence[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!).sort();
  const retriable = Object.entries(ErrorCode)
    .filter(([, code]) => isRetriable(code))
    .map(([name]) => name)
    .sort();
  assert.deepEqual(listed, retriable);
});

/** The folders under src/ that a folder's files import statically. */
function importsOf(folder: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(new URL(dir, root), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(`${path}/`);
      else if (entry.name.endsWith(".ts")) {
        const text = read(path);
        for (const m of text.matchAll(/^(?:import|export) [^;]*? from "((?:\.\.\/)+)([a-z-]+)\//gm)) {
          // Only imports that leave src/<folder>/ count; a sub-folder's `../` stays inside it.
          const depth = path.split("/").length - 2;
          if (m[1]!.length / 3 !== depth) continue;
          const target = m[2]!;
          if (target !== folder) found.set(target, [...(found.get(target) ?? []), path]);
        }
      }
    }
  };
  walk(`src/${folder}/`);
  return found;
}

test("docs/design.md's layer table says which folders each folder imports", () => {
  const design = read("docs/design.md");
  const rows = [...design.matchAll(/^\| `src\/([a-z-]+)\/` \| [^|]+ \| ([^|]+) \|$/gm)];
  const folders = readdirSync(new URL("src/", root), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.deepEqual(rows.map((r) => r[1]).sort(), folders, "one row per folder of src/");
  for (const [, folder, allowed] of rows) {
    if (allowed!.trim() === "everything") continue;
    const may = new Set([...allowed!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]));
    for (const [target, files] of importsOf(folder!)) {
      assert.ok(
        may.has(target),
        `src/${folder}/ imports ${target} (${files[0]}) but design.md does not say so`,
      );
    }
  }
});

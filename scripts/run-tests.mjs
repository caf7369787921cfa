#!/usr/bin/env node
// Runs every compiled `*.test.js` under dist/test with Node's test runner. Node 20 treats any .js
// file below a `test` folder as a test, which would also run fixtures and child-process scripts, so
// the list is made here. Extra arguments narrow it: `npm test -- storage` runs dist/test/storage only.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = "dist/test";
const filters = process.argv.slice(2);

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    // Only tests whose TypeScript source still exists: dist/ may hold output of deleted files.
    else if (name.endsWith(".test.js") && existsSync(path.replace(/^dist\//, "").replace(/\.js$/, ".ts"))) {
      out.push(path);
    }
  }
  return out;
}

const files = collect(root).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error(`no test files found under ${root}${filters.length ? ` matching ${filters.join(", ")}` : ""}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-timeout=300000", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);

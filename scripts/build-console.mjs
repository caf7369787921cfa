#!/usr/bin/env node
// Builds the web console into dist/console/: its TypeScript compiled by tsc to ES modules (no
// bundler: the browser loads the modules the broker serves) and console/static/ copied beside it.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const result = spawnSync(process.execPath, [tsc, "-p", "console/tsconfig.json"], { stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
const out = "dist/console";
mkdirSync(out, { recursive: true });
for (const name of readdirSync("console/static")) copyFileSync(join("console/static", name), join(out, name));

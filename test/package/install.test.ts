/**
 * The package as a user gets it: `npm pack` of a fresh clone without dist/ (which builds through
 * `prepare`, as an install from a clone or a git URL does), installed from the tarball into a fresh project, then imported as ESM,
 * type-checked with tsc, and its `conch` command run through npx. The SDK import must also work
 * without the command's packages, so an SDK user never loads them.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

let dir = "";
let project = "";

function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  // No audit or funding calls; the dependencies come from the npm cache.
  return run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    env: { ...process.env, npm_config_update_notifier: "false" },
    maxBuffer: 16 * 1024 * 1024,
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "conch-pack-"));
  // A clone as git gives it: every file git tracks (and any new one it does not ignore), no dist/
  // (its node_modules shared, as `npm ci` would make it).
  const clone = join(dir, "clone");
  const listed = await run("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  for (const file of listed.stdout.split("\0")) {
    if (file === "" || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(clone, file));
  }
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
  const packed = await npm(["pack", "--json", "--pack-destination", dir], clone);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  assert.ok(info, "npm pack made a tarball");
  assert.ok(
    info.files.some((f) => f.path === "dist/src/index.js"),
    "the tarball holds the built SDK (prepare ran the build)",
  );
  project = join(dir, "app");
  await run("mkdir", [project]);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module" }),
  );
  // --prefer-offline: the tarballs come from the cache; only the package documents may need the registry.
  // --ignore-scripts: zstd-napi's install script compiles zstd, minutes on a loaded 2-core machine;
  // without it its binary is missing, which one test below relies on.
  await npm(["install", "--prefer-offline", "--ignore-scripts", join(dir, info.filename)], project);
});

after(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

test("the package is published as conchmq, with the command conch", () => {
  assert.equal(pkg.name, "conchmq");
  const installed = JSON.parse(
    readFileSync(join(project, "node_modules", "conchmq", "package.json"), "utf8"),
  ) as { bin: Record<string, string> };
  assert.deepEqual(Object.keys(installed.bin), ["conch"]);
});

test("import { createClient } from 'conchmq' works from the installed tarball", async () => {
  writeFileSync(
    join(project, "sdk.mjs"),
    'import { createClient, ConchError, ErrorCode } from "conchmq";\n' +
      "const client = createClient({ brokers: ['127.0.0.1:1'] });\n" +
      "await client.close();\n" +
      "console.log(typeof createClient, typeof ConchError, ErrorCode.UNKNOWN_TOPIC);\n",
  );
  const r = await run(process.execPath, ["sdk.mjs"], { cwd: project });
  assert.equal(r.stdout, "function function 8\n");
});

test("with zstd-napi's binary not built, gzip works and zstd is UNSUPPORTED_COMPRESSION naming zstd-napi", async () => {
  writeFileSync(
    join(project, "codecs.mjs"),
    'import { createClient } from "conchmq";\n' +
      "const client = createClient({ brokers: ['127.0.0.1:1'] });\n" +
      'client.producer({ compression: "gzip" });\n' +
      'try { client.producer({ compression: "zstd" }); } catch (err) { console.log(err.codeName, err.message); }\n' +
      "await client.close();\n",
  );
  const r = await run(process.execPath, ["codecs.mjs"], { cwd: project });
  assert.match(r.stdout, /^UNSUPPORTED_COMPRESSION zstd compression needs the npm package zstd-napi/);
});

test("the SDK's types resolve for a TypeScript project", async () => {
  writeFileSync(
    join(project, "app.ts"),
    'import { type Conch, createClient } from "conchmq";\n' +
      'const client: Conch = createClient({ brokers: ["127.0.0.1:7420"] });\n' +
      "const producer = client.producer();\n" +
      'export const sent: Promise<unknown> = producer.send("orders", { value: "hello" });\n' +
      "// @ts-expect-error: brokers is a list of addresses\n" +
      "createClient({ brokers: 7420 });\n",
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        typeRoots: [join(ROOT, "node_modules", "@types")],
        types: ["node"],
      },
      files: ["app.ts"],
    }),
  );
  const r = await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: project }).catch(
    (err: { stdout?: string }) => ({ stdout: `tsc failed: ${err.stdout ?? String(err)}` }),
  );
  assert.equal(r.stdout, "");
});

test("npx conch --version and --help run the installed command", async () => {
  const version = await npm(["exec", "--prefer-offline", "--", "conch", "--version"], project);
  assert.equal(version.stdout.trim(), pkg.version);
  const help = await npm(["exec", "--prefer-offline", "--", "conch", "--help"], project);
  assert.match(help.stdout, /^Usage: conch /);
  assert.match(help.stdout, /consume/);
});

test("the SDK imports without the command's packages (commander and the optional bench packages)", async () => {
  const cliOnly = ["commander", ...Object.keys(pkg.optionalDependencies ?? {})];
  assert.ok(pkg.dependencies.commander !== undefined, "the conch command needs commander at run time");
  for (const name of ["cli-progress", "hdr-histogram-js"]) {
    assert.equal(pkg.dependencies[name], undefined, `${name} serves only conch bench`);
  }
  const bare = join(dir, "bare");
  await run("cp", ["-r", project, bare]);
  for (const name of cliOnly) rmSync(join(bare, "node_modules", name), { recursive: true, force: true });
  const r = await run(process.execPath, ["sdk.mjs"], { cwd: bare });
  assert.equal(r.stdout, "function function 8\n");
  // And without the bench packages, conch bench says what is missing instead of a stack.
  const withCommander = join(dir, "no-bench");
  await run("cp", ["-r", project, withCommander]);
  for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
    rmSync(join(withCommander, "node_modules", name), { recursive: true, force: true });
  }
  const bench = await run(join(withCommander, "node_modules", ".bin", "conch"), ["bench", "produce"], {
    cwd: withCommander,
  }).catch((err: { code: number; stdout: string; stderr: string }) => err);
  assert.equal((bench as { code?: number }).code, 1);
  assert.match(
    bench.stderr,
    /^error: conch bench needs the optional packages cli-progress and hdr-histogram-js/,
  );
});

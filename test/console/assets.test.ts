/** The console's files as the broker serves them, and as the npm package ships them. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { CONSOLE_DIR, loadConsoleAssets } from "../../src/http/console-routes.js";
import { startHttp } from "../http/helpers.js";

test("GET / serves the console page, its modules and styles, with types and revalidation", async (t) => {
  const { base } = await startHttp(t);
  const page = await fetch(`${base}/`);
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  const html = await page.text();
  assert.match(html, /<script type="module" src="\/console\/main\.js">/);
  // Everything the page and its modules name is served by the broker: no CDN, no other host.
  const assets = loadConsoleAssets();
  for (const [name, asset] of assets) {
    const text = asset.body.toString("utf8");
    assert.doesNotMatch(text, /(src|href)=["']?(https?:)?\/\//i, `${name} loads nothing from elsewhere`);
    assert.doesNotMatch(text, /from\s+["']https?:/, `${name} imports nothing from elsewhere`);
  }
  for (const [path, type] of [
    ["/console/main.js", "text/javascript; charset=utf-8"],
    ["/console/views/topics.js", "text/javascript; charset=utf-8"],
    ["/console/style.css", "text/css; charset=utf-8"],
    ["/console/icon.svg", "image/svg+xml"],
  ] as const) {
    const res = await fetch(base + path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), type, path);
    const etag = res.headers.get("etag")!;
    await res.arrayBuffer();
    const again = await fetch(base + path, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304, `${path} unchanged is answered 304`);
  }
  // Every module is preloaded by the page, so the browser fetches them all in one round.
  for (const name of assets.keys()) {
    if (name.endsWith(".js") && name !== "main.js") {
      assert.ok(html.includes(`<link rel="modulepreload" href="/console/${name}">`), `${name} is preloaded`);
    }
  }
  // Every module the console imports is there (a missing one would break the page in a browser).
  for (const [name, asset] of assets) {
    if (!name.endsWith(".js")) continue;
    for (const m of asset.body.toString("utf8").matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
      const target = new URL(m[1]!, `http://x/${name}`).pathname.slice(1);
      assert.ok(assets.has(target), `${name} imports ${target}, which is served`);
    }
  }
});

test("only the console's own files are served: other names, traversal and methods are refused", async (t) => {
  const { base } = await startHttp(t);
  for (const path of [
    "/console/nope.js",
    "/console/..%2f..%2fpackage.json",
    "/console/%2e%2e/index.html",
    "/console/a/b/c.js",
  ]) {
    const res = await fetch(base + path);
    assert.equal(res.status, 404, path);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, "UNKNOWN_API");
  }
  const post = await fetch(`${base}/`, { method: "POST" });
  assert.equal(post.status, 405);
});

test("npm run build puts the console in dist/console, and the package ships it", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    files: string[];
  };
  assert.ok(pkg.files.includes("dist/console"), 'package.json "files" has dist/console');
  assert.match(CONSOLE_DIR, /dist\/console\/$/);
  const names = [...loadConsoleAssets().keys()];
  for (const name of ["index.html", "main.js", "style.css", "views/messages.js"])
    assert.ok(names.includes(name), name);
});

/**
 * The web console's files (console/, built into dist/console/ by `npm run build`): read once when
 * the HTTP port starts, from a fixed list, so a request can only ever name one of them. `/` is the
 * page; `/console/<file>` its scripts and styles. Nothing is fetched from elsewhere (no CDN): the
 * broker serves the whole console.
 */
import { createHash } from "node:crypto";
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { Route } from "./router.js";

/** dist/src/http/ -> dist/console/. */
export const CONSOLE_DIR = fileURLToPath(new URL("../../console/", import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** Every servable file under `dir`, by its path relative to it ("views/topics.js"); empty when not built. */
export function loadConsoleAssets(dir = CONSOLE_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return assets;
  }
  for (const entry of entries) {
    const type = TYPES[extname(entry.name)];
    if (type === undefined || !entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const body = readFileSync(path);
    const etag = `"${createHash("sha1").update(body).digest("base64url").slice(0, 16)}"`;
    assets.set(relative(dir, path).split(sep).join("/"), { body, type, etag });
  }
  return assets;
}

export function consoleRoutes(assets: Map<string, Asset> = loadConsoleAssets()): Route[] {
  const serve = (name: string): Route["handler"] => {
    return ({ req, res }) => {
      const asset = assets.get(name);
      if (asset === undefined) {
        throw new ConchError(ErrorCode.UNKNOWN_API, `no console file ${name} (is the console built?)`);
      }
      // Revalidated each time (a new broker version may change them), answered 304 when unchanged.
      const headers = { "content-type": asset.type, etag: asset.etag, "cache-control": "no-cache" };
      if (req.headers["if-none-match"] === asset.etag) {
        res.writeHead(304, headers);
        res.end();
        return null;
      }
      res.writeHead(200, { ...headers, "content-length": asset.body.length });
      res.end(req.method === "HEAD" ? undefined : asset.body);
      return null;
    };
  };
  return [
    // Behind the login (when one is required), so the browser asks for it on opening the page and
    // then sends it with the console's fetches and its event stream (same origin, same realm).
    { method: "GET", path: "/", access: "login", handler: serve("index.html") },
    { method: "GET", path: "/console/:file", access: "login", handler: (r) => serve(r.params.file!)(r) },
    {
      method: "GET",
      path: "/console/:dir/:file",
      access: "login",
      handler: (r) => serve(`${r.params.dir}/${r.params.file}`)(r),
    },
  ];
}

#!/usr/bin/env node
// Checks that every relative link in README.md and the markdown under docs/ points at a file that
// exists and, when it names an anchor in a markdown file, at a heading that file has. Anchors are
// made the way GitHub makes them, so a link that works here works there. Exits 1 and lists the
// broken links when there are any.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

function markdownFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...markdownFiles(path));
    else if (name.endsWith(".md")) out.push(path);
  }
  return out;
}

// The lines outside fenced code blocks, with inline code spans blanked out of all but headings:
// neither holds links (a heading's code is part of its anchor).
function proseLines(text) {
  const out = [];
  let fence = null;
  for (const line of text.split("\n")) {
    const open = /^\s*(```+|~~~+)/.exec(line);
    if (fence !== null) {
      if (open !== null && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
      out.push("");
      continue;
    }
    if (open !== null) {
      fence = open[1];
      out.push("");
      continue;
    }
    out.push(/^#/.test(line) ? line : line.replace(/`+[^`]*`+/g, ""));
  }
  return out;
}

// GitHub's anchor for a heading: lower case, everything but letters, digits, spaces, hyphens and
// underscores dropped, spaces turned into hyphens; a repeated anchor gets -1, -2, ...
function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const plain = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const anchorCache = new Map();
function anchorsOfFile(path) {
  let anchors = anchorCache.get(path);
  if (anchors === undefined) {
    anchors = anchorsOf(readFileSync(path, "utf8"));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

const files = [join(root, "README.md"), ...markdownFiles(join(root, "docs"))];
const broken = [];
let links = 0;
for (const file of files) {
  const lines = proseLines(readFileSync(file, "utf8"));
  lines.forEach((line, i) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links++;
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === "" ? file : resolve(dirname(file), pathPart);
      const where = `${relative(root, file)}:${i + 1}`;
      if (!existsSync(dest)) {
        broken.push(`${where}: ${target}: no such file`);
        continue;
      }
      if (anchor !== null && dest.endsWith(".md") && !anchorsOfFile(dest).has(anchor)) {
        broken.push(`${where}: ${target}: no heading with that anchor in ${relative(root, dest)}`);
      }
    }
  });
}
if (broken.length > 0) {
  console.error(broken.join("\n"));
  console.error(`${broken.length} broken of ${links} relative links in ${files.length} files`);
  process.exit(1);
}
console.log(`${links} relative links in ${files.length} files resolve`);

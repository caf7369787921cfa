/**
 * Reserving disk blocks for a preallocated segment. Node has no fallocate(2), and spawning
 * util-linux's `fallocate` per segment forks the whole Node process, which blocks the event loop
 * for a time that grows with the heap (it showed in the storage benchmark's profile). So one small
 * shell process is started on first use and kept: each request is one line on its stdin
 * (`<offset> <length> <path>`), each answer one line back ("ok" or "no"), in order. It runs
 * `fallocate -o <offset> -l <length> -- <path>`: mode 0 allocates unwritten extents for the holes
 * and changes no data; the file is already that long, so its size does not change either.
 *
 * Without `sh` or `fallocate`, or on a file system that refuses, every answer is false and the file
 * stays sparse (blocks are then allocated as data is written).
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

// `read` puts the first two words in offset and size and the rest of the line, spaces included, in path.
const SCRIPT =
  'while read -r offset size path; do if fallocate -o "$offset" -l "$size" -- "$path" 2>/dev/null; then echo ok; else echo no; fi; done';

let helper: ChildProcessByStdio<Writable, Readable, null> | null = null;
let broken = false;
let pending: ((ok: boolean) => void)[] = [];
let partial = "";

/** Asks the helper to reserve blocks for bytes [offset, bytes) of `path`; resolves true when it did. */
export function fallocate(path: string, bytes: number, offset = 0): Promise<boolean> {
  if (offset >= bytes) return Promise.resolve(true);
  if (broken || path.includes("\n") || path.trim() !== path) return Promise.resolve(false);
  const child = helper ?? start();
  if (child === null) return Promise.resolve(false);
  return new Promise((resolve) => {
    if (pending.length === 0) setRef(child, true);
    pending.push(resolve);
    child.stdin.write(`${offset} ${bytes - offset} ${path}\n`);
  });
}

/**
 * While an answer is awaited the helper keeps the process alive (a closing log waits for it);
 * when idle it must not, nor outlive the process: it exits when its stdin closes.
 */
function setRef(child: ChildProcessByStdio<Writable, Readable, null>, on: boolean): void {
  for (const handle of [child, child.stdin, child.stdout] as object[]) {
    const h = handle as { ref?: () => void; unref?: () => void };
    if (on) h.ref?.();
    else h.unref?.();
  }
}

function start(): ChildProcessByStdio<Writable, Readable, null> | null {
  let child: ChildProcessByStdio<Writable, Readable, null>;
  try {
    child = spawn("sh", ["-c", SCRIPT], { stdio: ["pipe", "pipe", "ignore"] });
  } catch {
    broken = true;
    return null;
  }
  setRef(child, false);
  child.stdin.on("error", fail);
  child.once("error", fail);
  child.once("exit", fail);
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    partial += chunk;
    let nl = partial.indexOf("\n");
    while (nl >= 0) {
      const answer = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      pending.shift()?.(answer === "ok");
      if (pending.length === 0) setRef(child, false);
      nl = partial.indexOf("\n");
    }
  });
  helper = child;
  return child;
}

function fail(): void {
  broken = true;
  helper = null;
  const waiting = pending;
  pending = [];
  for (const resolve of waiting) resolve(false);
}

/**
 * A small shell process kept for requests that need a command Node has no binding for (fallocate(1),
 * syncfs through `sync -f`). Spawning a command per request forks the whole Node process, which
 * blocks the event loop for a time that grows with the heap (it showed in the storage benchmark's
 * profile), so one `sh` is started on first use and kept: each request is one line on its stdin,
 * each answer one line back ("ok" or anything else), in order. Without `sh`, or once the helper
 * died, every answer is false.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export class LineHelper {
  readonly #script: string;
  #child: ChildProcessByStdio<Writable, Readable, null> | null = null;
  #broken = false;
  #pending: ((ok: boolean) => void)[] = [];
  #partial = "";

  /** `script` reads request lines from stdin and answers each with one line, "ok" on success. */
  constructor(script: string) {
    this.#script = script;
  }

  /** Sends `line` (no newline in it); resolves true when the answer was "ok". */
  ask(line: string): Promise<boolean> {
    if (this.#broken || line.includes("\n")) return Promise.resolve(false);
    const child = this.#child ?? this.#start();
    if (child === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      if (this.#pending.length === 0) setRef(child, true);
      this.#pending.push(resolve);
      child.stdin.write(`${line}\n`);
    });
  }

  #start(): ChildProcessByStdio<Writable, Readable, null> | null {
    let child: ChildProcessByStdio<Writable, Readable, null>;
    try {
      child = spawn("sh", ["-c", this.#script], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      this.#broken = true;
      return null;
    }
    setRef(child, false);
    const fail = () => this.#fail();
    child.stdin.on("error", fail);
    child.once("error", fail);
    child.once("exit", fail);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      this.#partial += chunk;
      let nl = this.#partial.indexOf("\n");
      while (nl >= 0) {
        const answer = this.#partial.slice(0, nl);
        this.#partial = this.#partial.slice(nl + 1);
        this.#pending.shift()?.(answer === "ok");
        if (this.#pending.length === 0) setRef(child, false);
        nl = this.#partial.indexOf("\n");
      }
    });
    this.#child = child;
    return child;
  }

  #fail(): void {
    this.#broken = true;
    this.#child = null;
    const waiting = this.#pending;
    this.#pending = [];
    for (const resolve of waiting) resolve(false);
  }
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

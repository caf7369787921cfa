/**
 * A small shell process kept for requests that need a command Node has no binding for (fallocate(1),
 * syncfs through `sync -f`). Spawning a command per request forks the whole Node process, which
 * blocks the event loop for a time that grows with the heap (it showed in the storage benchmark's
 * profile), so one `sh` is started and kept: each request is one line on its stdin,
 * each answer one line back ("ok" or anything else), in order. One request is on its way at a
 * time, the rest wait here, so that one whose signal aborts before its turn is never sent: a
 * closing log withdraws its queued reservation instead of waiting behind thousands of others.
 * Without `sh`, or once the helper died, every answer is false.
 *
 * When it starts matters too. The fork shares every page the process has written with the child,
 * copy-on-write, until the child execs; each of those pages the process writes afterwards takes a
 * page fault once. A helper started on first use, in a broker already holding hundreds of
 * megabytes (the first interval syncfs or block reservation of a busy run), cost that broker tens
 * of thousands of faults in the seconds after (docs/performance/scale.md, "Workload 6b: the
 * helpers' fork"). A helper starts on first use, or earlier through `startLineHelpers`, which the
 * broker calls as it opens, while it holds little.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

interface Request {
  line: string;
  resolve: (ok: boolean) => void;
  signal: AbortSignal | undefined;
  /** Answered, or withdrawn by its signal before its turn. */
  done: boolean;
  onAbort: (() => void) | null;
}

/** Every helper made (a few, for the process's life): `startLineHelpers` starts them. */
const helpers: LineHelper[] = [];

/** Starts the process of every helper not started yet (see the file comment: why early). */
export function startLineHelpers(): void {
  for (const helper of helpers) helper.start();
}

export class LineHelper {
  readonly #script: string;
  #child: ChildProcessByStdio<Writable, Readable, null> | null = null;
  #broken = false;
  /** Requests not sent yet, oldest first from #head. */
  #queue: Request[] = [];
  #head = 0;
  /** The request whose answer is awaited. */
  #sent: Request | null = null;
  /** Whether the helper holds the process alive (while a request is out). */
  #held = false;
  #partial = "";

  /** `script` reads request lines from stdin and answers each with one line, "ok" on success. */
  constructor(script: string) {
    this.#script = script;
    helpers.push(this);
  }

  /** Whether its process runs (started, and not failed or exited). */
  get running(): boolean {
    return this.#child !== null;
  }

  /** Starts its process now if it has none yet; nothing if it runs, or failed for good. */
  start(): void {
    if (this.#child === null && !this.#broken) this.#start();
  }

  /**
   * Sends `line` (no newline in it); resolves true when the answer was "ok", false when it was not.
   * A `signal` that aborts before the request's turn withdraws it: it resolves false at once and
   * is never sent (one already sent is answered as usual).
   */
  ask(line: string, signal?: AbortSignal): Promise<boolean> {
    if (this.#broken || line.includes("\n") || signal?.aborted === true) return Promise.resolve(false);
    const child = this.#child ?? this.#start();
    if (child === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      const request: Request = { line, resolve, signal, done: false, onAbort: null };
      if (signal !== undefined) {
        request.onAbort = () => settle(request, false);
        signal.addEventListener("abort", request.onAbort, { once: true });
      }
      this.#queue.push(request);
      if (this.#sent === null) this.#sendNext(child);
    });
  }

  /** Sends the oldest request still wanted; the process is held alive only while one is out. */
  #sendNext(child: ChildProcessByStdio<Writable, Readable, null>): void {
    if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    while (this.#head < this.#queue.length) {
      const request = this.#queue[this.#head++]!;
      if (request.done) continue;
      if (request.onAbort !== null) request.signal!.removeEventListener("abort", request.onAbort);
      this.#sent = request;
      this.#hold(child, true);
      child.stdin.write(`${request.line}\n`);
      return;
    }
    this.#queue = [];
    this.#head = 0;
    this.#hold(child, false);
  }

  #hold(child: ChildProcessByStdio<Writable, Readable, null>, on: boolean): void {
    if (this.#held === on) return;
    this.#held = on;
    setRef(child, on);
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
        const answered = this.#sent;
        this.#sent = null;
        if (answered !== null) settle(answered, answer === "ok");
        this.#sendNext(child);
        nl = this.#partial.indexOf("\n");
      }
    });
    this.#child = child;
    return child;
  }

  #fail(): void {
    this.#broken = true;
    this.#child = null;
    const waiting = [this.#sent, ...this.#queue.slice(this.#head)];
    this.#sent = null;
    this.#queue = [];
    this.#head = 0;
    for (const request of waiting) if (request !== null) settle(request, false);
  }
}

function settle(request: Request, ok: boolean): void {
  if (request.done) return;
  request.done = true;
  if (request.onAbort !== null) request.signal!.removeEventListener("abort", request.onAbort);
  request.resolve(ok);
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

/**
 * `conch consume ... | head -3`: when the reader of stdout goes away, consume ends at once, also
 * while no new message comes (nothing is written, so no write fails), and a group commits what was
 * printed and leaves, so the next run goes on from the next message without waiting out a ghost
 * member. Both kinds of stdout a reader can close are tried: a shell pipe (a FIFO here) and the
 * socket pair Node gives a child's stdout.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { test } from "node:test";
import { collect, type RunResult, spawnConch, spawnConchTo, useSharedBroker } from "./cli-harness.js";

const shared = useSharedBroker();
const conch = shared.conch;

/** How long a command may take to notice that its reader left (it takes milliseconds). */
const PROMPT_MS = 5_000;

type StdoutKind = "fifo" | "socket";

interface Piped {
  child: ChildProcess;
  done: Promise<RunResult>;
  /** The reading end of the command's stdout. */
  out: Readable;
  /** Closes the reading end, as `head` does when it has its lines. */
  closeReader(): void;
}

let fifos = 0;

function spawnPiped(kind: StdoutKind, args: string[]): Piped {
  const argv = [...args, "--broker", shared.broker.address];
  if (kind === "socket") {
    const child = spawnConch(argv);
    const out = child.stdout!;
    return { child, done: collect(child, 60_000, false), out, closeReader: () => out.destroy() };
  }
  const path = join(shared.dir, `stdout-${fifos++}.fifo`);
  execFileSync("mkfifo", [path]);
  // Open the reading end first (non-blocking), so that opening the writing end does not wait.
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY);
  const child = spawnConchTo(argv, writeFd);
  closeSync(writeFd);
  const out = new Socket({ fd: readFd, readable: true, writable: false });
  return { child, done: collect(child, 60_000, false), out, closeReader: () => out.destroy() };
}

/** Resolves with the first `n` lines the command prints; `produce(i)` is called before line i. */
async function readLines(p: Piped, n: number, produce: (i: number) => Promise<void>): Promise<string[]> {
  const rl = createInterface({ input: p.out });
  const it = rl[Symbol.asyncIterator]();
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    await produce(i);
    const r = await it.next();
    if (r.done) break;
    lines.push(r.value);
  }
  rl.close();
  return lines;
}

/** Resolves with the command's result, or fails if it is still running `ms` after the reader left. */
async function exitsWithin(p: Piped, ms: number): Promise<RunResult & { ms: number }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      p.child.kill("SIGKILL");
      reject(new Error(`consume still running ${ms} ms after its reader went away`));
    }, ms);
  });
  try {
    const r = await Promise.race([p.done, late]);
    return { ...r, ms: Date.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

for (const kind of ["fifo", "socket"] as const) {
  test(`consume --group on a ${kind} stdout: a reader leaving after 3 lines ends it; the next run starts at the 4th at once`, async () => {
    const topic = `gone-group-${kind}`;
    assert.equal((await conch(["topic", "create", topic])).code, 0);
    const p = spawnPiped(kind, ["consume", topic, "--group", "g"]);
    // One message at a time, each read before the next is sent: exactly three are printed.
    const lines = await readLines(p, 3, async (i) => {
      assert.equal((await conch(["produce", topic], `m${i}\n`)).code, 0);
    });
    assert.deepEqual(lines, ["m1", "m2", "m3"]);
    p.closeReader();
    const r = await exitsWithin(p, PROMPT_MS);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");

    assert.equal((await conch(["produce", topic], "m4\nm5\n")).code, 0);
    const start = Date.now();
    const next = await conch(["consume", topic, "--group", "g", "--max-messages", "1"]);
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, "m4\n");
    // A member that did not leave holds its partition until its 10 s session runs out.
    assert.ok(Date.now() - start < PROMPT_MS, `the next run took ${Date.now() - start} ms`);
  });

  test(`consume on a ${kind} stdout exits as soon as its reader leaves, with no new messages`, async () => {
    const topic = `gone-plain-${kind}`;
    assert.equal((await conch(["topic", "create", topic])).code, 0);
    const ten = Array.from({ length: 10 }, (_, i) => `m${i + 1}`).join("\n");
    assert.equal((await conch(["produce", topic], ten)).code, 0);
    const p = spawnPiped(kind, ["consume", topic]);
    const lines = await readLines(p, 3, async () => {});
    assert.deepEqual(lines, ["m1", "m2", "m3"]);
    p.closeReader();
    const r = await exitsWithin(p, PROMPT_MS);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
  });
}

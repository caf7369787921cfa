/**
 * Runs the built `conch` command as a child process, the way a person or a script would, and a
 * `conch broker` on 127.0.0.1 port 0 in a temporary data directory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

/** bin/conch.js, from dist/test/cli/. */
export const CONCH = fileURLToPath(new URL("../../../bin/conch.js", import.meta.url));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** stdin: text, bytes, or a stream piped in (with backpressure). Default: empty. */
  input?: string | Buffer | Readable;
  env?: Record<string, string>;
  /** Kill the command if it runs longer (a safety net, not an assertion). Default 60 s. */
  killAfterMs?: number;
}

/** Spawns `conch args...` (stdout left to the caller). */
export function spawnConch(args: string[], options: RunOptions = {}): ChildProcess {
  return spawnConchTo(args, "pipe", options);
}

/** Spawns `conch args...` with its stdout on `stdout` (a descriptor, or a pipe to the caller). */
export function spawnConchTo(
  args: string[],
  stdout: number | "pipe",
  options: RunOptions = {},
): ChildProcess {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  if (options.env?.CONCH_BROKER === undefined) delete env.CONCH_BROKER;
  const child = spawn(process.execPath, [CONCH, ...args], {
    env,
    stdio: ["pipe", stdout, "pipe"],
  });
  const input = options.input ?? "";
  if (typeof input === "string" || Buffer.isBuffer(input)) child.stdin!.end(input);
  else input.pipe(child.stdin!);
  // A command that exits before reading all its input closes the pipe: not the test's concern.
  child.stdin!.on("error", () => {});
  return child;
}

/** Runs `conch args...` to completion and collects its output. */
export function runConch(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = spawnConch(args, options);
  return collect(child, options.killAfterMs ?? 60_000);
}

/** Waits for `child` to end; with `keepStdout` false the caller reads stdout itself (result stdout is ""). */
export function collect(child: ChildProcess, killAfterMs = 60_000, keepStdout = true): Promise<RunResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  if (keepStdout) child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => err.push(b));
  const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "conch-cli-"));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A `conch broker` child process, started on port 0 and known by its "listening on" line. */
export class BrokerProcess {
  readonly child: ChildProcess;
  readonly address: string;
  /** Every log line so far (JSON). */
  readonly logLines: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    child: ChildProcess,
    address: string,
    logLines: string[],
    exited: BrokerProcess["exited"],
  ) {
    this.child = child;
    this.address = address;
    this.logLines = logLines;
    this.exited = exited;
  }

  static async start(
    dataDir: string,
    extraArgs: string[] = [],
    env: Record<string, string> = {},
  ): Promise<BrokerProcess> {
    const child = spawn(
      process.execPath,
      [
        CONCH,
        "broker",
        "--port",
        "0",
        "--http-port",
        "0",
        "--kafka-port",
        "0",
        "--data-dir",
        dataDir,
        "--log-format",
        "json",
        ...extraArgs,
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CONCH_CONFIG: "", ...env } },
    );
    const lines: string[] = [];
    let stderr = "";
    child.stderr!.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal }));
    });
    const address = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.on("line", (line) => {
        lines.push(line);
        const m = / listening on (\S+) /.exec(line);
        if (m) resolve(m[1]!);
      });
      exited.then(({ code }) =>
        reject(new Error(`conch broker exited (${code}) before listening: ${stderr}`)),
      );
    });
    return new BrokerProcess(child, address, lines, exited);
  }

  /** "127.0.0.1:port" of the HTTP port, from the line the broker logs once it listens; "" if none. */
  get httpAddress(): string {
    for (const line of this.logLines) {
      const m = /conch HTTP .* on (\S+)"/.exec(line);
      if (m) return m[1]!;
    }
    return "";
  }

  /** Sends `signal` and resolves with how the process ended. */
  async stop(
    signal: NodeJS.Signals = "SIGTERM",
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** A broker shared by every test of a file: started before them, stopped and removed after. */
export interface SharedBroker {
  readonly dir: string;
  readonly broker: BrokerProcess;
  /** Runs `conch ARGS --broker <the shared broker>`, with `input` on stdin when given. */
  conch(args: string[], input?: string): Promise<RunResult>;
}

export function useSharedBroker(): SharedBroker {
  let dir = "";
  let broker: BrokerProcess | undefined;
  before(async () => {
    dir = tempDir();
    broker = await BrokerProcess.start(dir);
  });
  after(async () => {
    await broker?.stop();
    removeDir(dir);
  });
  const shared: SharedBroker = {
    get dir() {
      return dir;
    },
    get broker() {
      if (broker === undefined) throw new Error("the shared broker is not started yet");
      return broker;
    },
    conch: (args, input) =>
      runConch([...args, "--broker", shared.broker.address], input === undefined ? {} : { input }),
  };
  return shared;
}

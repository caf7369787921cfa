import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep, unrefSleep } from "./deadline.js";
import { freePort } from "./free-port.js";
import { clearSpentDataSync, retire } from "./spent-data.js";
import type { Endpoint, RunningServer } from "./types.js";

const READY_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 10_000;

/**
 * Every server the suite started and has not stopped yet, with its data directory, so that an
 * interrupted run can still kill them and remove what they wrote.
 */
const live = new Map<ChildProcess, string>();

/** Synchronous, for exit and signal handlers. */
export function killAllServers(): void {
  for (const [child, dataDir] of live) {
    child.kill("SIGKILL");
    try {
      rmSync(dataDir, { recursive: true, force: true });
    } catch {
      // best effort: the process may still hold files open for a moment
    }
  }
  live.clear();
  clearSpentDataSync();
}

export interface LaunchSpec {
  /** Short name for temp dirs and messages. */
  name: string;
  command: string;
  /** Builds the arguments once the data directory and port are known; may write config files there. */
  args(dataDir: string, port: number): string[] | Promise<string[]>;
  env?: NodeJS.ProcessEnv;
  /** Extra readiness check after the port accepts connections (JetStream may lag the listener). */
  ready?(endpoint: Endpoint): Promise<void>;
}

/** A started server, with the file its stdout and stderr go to. */
export interface LaunchedServer extends RunningServer {
  readonly logPath: string;
}

/**
 * Starts a server on a free loopback port with a fresh data directory, waits until it accepts TCP
 * connections, and returns a handle whose stop() always kills it and retires the directory (removed
 * at the end of the run, see spent-data.ts).
 */
export async function launch(spec: LaunchSpec): Promise<LaunchedServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), `conch-bench-${spec.name}-`));
    try {
      return await launchOnce(spec, dataDir);
    } catch (err) {
      lastError = err;
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  throw lastError;
}

async function launchOnce(spec: LaunchSpec, dataDir: string): Promise<LaunchedServer> {
  const port = await freePort();
  const logPath = join(dataDir, "server.log");
  const log = openSync(logPath, "a");
  const args = await spec.args(dataDir, port);
  const child = spawn(spec.command, args, {
    cwd: dataDir,
    stdio: ["ignore", log, log],
    env: { ...process.env, ...spec.env },
  });
  closeSync(log);
  live.set(child, dataDir);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      live.delete(child);
      resolve();
    });
    child.once("error", () => {
      exited = true;
      live.delete(child);
      resolve();
    });
  });
  const endpoint: Endpoint = { host: "127.0.0.1", port };

  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill("SIGTERM");
      const graceful = await Promise.race([
        exitPromise.then(() => true),
        unrefSleep(STOP_GRACE_MS).then(() => false),
      ]);
      if (!graceful) {
        child.kill("SIGKILL");
        await Promise.race([exitPromise, unrefSleep(STOP_GRACE_MS)]);
      }
    }
    // Removed at the end of the run, not now (see spent-data.ts).
    retire(dataDir);
  };

  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await canConnect(endpoint))) {
      if (exited) throw new Error(`${spec.name} exited during start: ${tail(logPath)}`);
      if (Date.now() > deadline) throw new Error(`${spec.name} did not listen within ${READY_TIMEOUT_MS} ms`);
      await sleep(50);
    }
    if (spec.ready) await spec.ready(endpoint);
    if (child.pid === undefined || exited)
      throw new Error(`${spec.name} exited during start: ${tail(logPath)}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid, endpoint, stop, logPath };
}

export function canConnect(endpoint: Endpoint): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(endpoint.port, endpoint.host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function tail(path: string): string {
  try {
    const text = readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" | ");
    return text || "(no output)";
  } catch {
    return "(no log)";
  }
}

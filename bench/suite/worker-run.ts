import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { errorText } from "./deadline.js";
import { RESULT_PREFIX, type WorkerRequest, type WorkerResult } from "./worker-protocol.js";

const WORKER = fileURLToPath(new URL("./worker.js", import.meta.url));

const running = new Set<ChildProcess>();

/** Kills every worker still running (for exit and signal handlers). */
export function killAllWorkers(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/**
 * Runs one workload in a worker process, killing it after `timeoutMs`. Never rejects: a crash, a
 * timeout or an error inside the workload all come back as `{ ok: false, error }`.
 */
export function runWorker(request: WorkerRequest, timeoutMs: number): Promise<WorkerResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify(request)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      // Keep the end only: a chatty client must not grow the parent's memory without bound.
      stderr = (stderr + chunk).slice(-4_000);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (err) => {
      running.delete(child);
      clearTimeout(timer);
      resolve({ ok: false, error: errorText(err) });
    });
    child.on("close", (code, signal) => {
      running.delete(child);
      clearTimeout(timer);
      if (timedOut) {
        resolve({ ok: false, error: `timed out after ${Math.round(timeoutMs / 1000)} s` });
        return;
      }
      const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
      if (line) {
        try {
          resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as WorkerResult);
          return;
        } catch {
          // fall through to the generic message
        }
      }
      const lastError = stderr.trim().split("\n").slice(-1)[0] ?? "";
      resolve({ ok: false, error: `worker exited (${signal ?? code}) ${lastError}`.trim() });
    });
  });
}

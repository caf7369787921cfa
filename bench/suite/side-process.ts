import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * A client process of its own beside a workload's measured one (workload 7's crowd, workload 8's
 * paced producer), so that neither's event loop nor CPU is the other's. It gets one JSON argument,
 * prints `READY ...` once it runs, `DONE {json}` with its result when its stdin closes, and
 * `FAILED <reason>` if it cannot go on.
 */
export interface SideProcess<T> {
  /** Closes its stdin, waits for it to exit, and resolves with its DONE result. */
  stop(): Promise<T>;
}

/** Starts `script` with `request` and resolves once it prints READY within `readyMs`. */
export function startSideProcess<T>(
  script: string,
  request: unknown,
  what: string,
  readyMs: number,
): Promise<SideProcess<T>> {
  const child = spawn(process.execPath, [script, JSON.stringify(request)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let done: string | null = null;
  return new Promise<SideProcess<T>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} was not ready within ${readyMs} ms`));
    }, readyMs);
    lines.on("line", (line) => {
      if (line.startsWith("READY")) {
        clearTimeout(timer);
        resolve({
          stop: async () => {
            child.stdin.end();
            await exited;
            if (done === null) throw new Error(`${what} stopped without its result`);
            return JSON.parse(done) as T;
          },
        });
      } else if (line.startsWith("DONE ")) {
        done = line.slice(5);
      } else if (line.startsWith("FAILED ")) {
        clearTimeout(timer);
        reject(new Error(`${what} failed: ${line.slice(7)}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready`));
    });
  });
}

/** Resolves when the process's stdin closes or it gets SIGTERM: a side process's signal to stop. */
export function stopRequested(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.stdin.once("close", resolve);
    process.stdin.resume();
  });
}

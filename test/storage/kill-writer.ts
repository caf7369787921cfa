/**
 * Crash-test plumbing shared by the storage and compaction crash tests: runs a writer script in a
 * child process and kills it with SIGKILL, returning the whole lines it printed before it died.
 */
import { spawn } from "node:child_process";

export interface KilledWriter {
  /** Complete lines of stdout; a last line cut by the kill is dropped. */
  lines: string[];
  stderr: string;
}

/**
 * Runs `node <writer> <dir>` and kills it `killAfterMs` after it prints "ready", or after it starts
 * when `early` (so some kills land while it opens and recovers the log).
 */
export function runAndKill(
  writer: string,
  dir: string,
  killAfterMs: number,
  early: boolean,
): Promise<KilledWriter> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, dir], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let stderr = "";
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      timer ??= setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    };
    if (early) arm();
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      if (out.startsWith("ready")) arm();
    });
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("close", () => {
      clearTimeout(timer);
      resolve({ lines: out.split("\n").slice(0, -1), stderr });
    });
  });
}

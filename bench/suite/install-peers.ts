import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * Runs bench/peers/install.sh (apt-get; a no-op when both servers are present) under a time limit.
 * Resolves with a one-line outcome; never rejects, since a missing peer only removes its rows.
 */
export function installPeers(): Promise<string> {
  // Compiled to dist/bench/suite/: the script stays in the source tree.
  const script = fileURLToPath(new URL("../../../bench/peers/install.sh", import.meta.url));
  return new Promise((resolve) => {
    const child = spawn("bash", [script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-4_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve(`install script could not run: ${err.message}`);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = output.trim().split("\n").slice(-1)[0] ?? "";
      resolve(code === 0 ? last : `install script failed (${signal ?? code}): ${last}`);
    });
  });
}

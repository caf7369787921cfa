// A `conch broker` child process as the benchmarks that measure one start it: on 127.0.0.1, ports
// chosen by the system, logs as JSON at info (the "listening on" line), and its CPU and memory
// read from /proc.
import { readFileSync } from "node:fs";

/** The arguments of `node <bin> broker` on `dataDir` with room for `maxPartitions`. */
export function brokerArgs(bin: string, dataDir: string, maxPartitions: number): string[] {
  return [
    bin,
    "broker",
    "--data-dir",
    dataDir,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--http-port",
    "0",
  ].concat([
    "--max-partitions",
    String(maxPartitions),
    // The "listening on" line is at info.
    "--log-level",
    "info",
    "--log-format",
    "json",
  ]);
}

/** User plus system CPU time of a live process in ms, from /proc (NaN where there is none). */
export function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Resident memory of a live process in MiB, from /proc. */
export function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

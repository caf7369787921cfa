import { spawn } from "node:child_process";
import { type Span, startClockWithChildren } from "./clock.js";

// The Kafka workloads drive the broker's Kafka listener with kcat (Debian's package, on librdkafka):
// a C client that reads messages from a pipe and prints what it consumes costs a fraction of the
// client CPU that confluent-kafka's Python loop does for the same messages (docs/performance/kafka.md,
// "Kafka listener"), so it loads the shared cores least.

export const KCAT = process.env.CONCH_BENCH_KCAT ?? "kcat";

/** What the worker writes to kcat's stdin: `block` `repeat` times, then `tail`. */
export interface KcatInput {
  block: Buffer;
  repeat: number;
  tail: Buffer;
}

export interface KcatRun extends Span {
  /** The last of kcat's stderr (errors it printed), for the failure message. */
  stderr: string;
}

/**
 * Runs kcat to its exit, feeding `input` to its stdin (respecting the pipe's backpressure) and its
 * stdout to `onStdout`. The span runs from the spawn to the exit; its CPU time is the worker's
 * and kcat's (counted by the kernel once kcat is reaped). Rejects when kcat cannot start or
 * exits with an error, with the end of what it printed.
 */
export function runKcat(
  args: readonly string[],
  input: KcatInput | null,
  onStdout: ((chunk: Buffer) => void) | null,
): Promise<KcatRun> {
  return new Promise((resolve, reject) => {
    const clock = startClockWithChildren();
    const child = spawn(KCAT, args, {
      stdio: [input ? "pipe" : "ignore", onStdout ? "pipe" : "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      // The end only: a run where every delivery fails prints a line per message.
      stderr = (stderr + chunk).slice(-2_000);
    });
    if (onStdout) child.stdout?.on("data", onStdout);
    if (input && child.stdin) feed(child.stdin, input);
    child.once("error", (err) =>
      reject(new Error(`${KCAT} did not start (${err.message}); on Debian: apt-get install kcat`)),
    );
    child.once("close", (code, signal) => {
      const span: KcatRun = { ...clock(), stderr: stderr.trim() };
      if (code === 0) resolve(span);
      else reject(new Error(`kcat exited (${signal ?? code}): ${lastLine(span.stderr)}`));
    });
  });
}

function feed(stdin: NodeJS.WritableStream, input: KcatInput): void {
  let left = input.repeat;
  // kcat gone early (it failed): its exit code tells why, not the broken pipe.
  stdin.on("error", () => {});
  const pump = (): void => {
    while (left > 0) {
      left--;
      if (!stdin.write(input.block)) {
        stdin.once("drain", pump);
        return;
      }
    }
    stdin.end(input.tail);
  };
  pump();
}

function lastLine(text: string): string {
  return text.split("\n").slice(-1)[0] || "(nothing on stderr)";
}

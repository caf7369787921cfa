/**
 * The shared frame of every benchmark: a client, the topic, a GC meter around the timed part, and
 * the report.
 */
import type { Conch } from "../client/conch.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { BenchOptions } from "./bench-commands.js";
import { benchConsume } from "./bench-consume.js";
import { benchLatency } from "./bench-latency.js";
import { benchProduce } from "./bench-produce.js";
import {
  type BenchReport,
  buildReport,
  formatReport,
  GcMeter,
  type LatencyRecorder,
} from "./bench-report.js";
import { withClient } from "./client-session.js";
import { printLine, printStatus } from "./output.js";

/** What a benchmark's timed part measured. */
export interface BenchResult {
  messages: number;
  /** Value bytes moved (keys and record headers not counted). */
  bytes: number;
  seconds: number;
  /** Null where no per-message or per-call latency is meaningful. */
  latency: LatencyRecorder | null;
}

export async function runBench(
  kind: "produce" | "consume" | "latency",
  o: BenchOptions,
): Promise<BenchReport> {
  return withClient(o, async (client) => {
    await ensureTopic(client, o.topic, o.partitions);
    const gc = new GcMeter();
    const run = kind === "produce" ? benchProduce : kind === "consume" ? benchConsume : benchLatency;
    const result = await run(client, o, gc);
    const gcMs = await gc.stop();
    const report = buildReport(result.messages, result.bytes, result.seconds, result.latency, gcMs);
    result.latency?.destroy();
    printLine(o.json ? JSON.stringify(report) : formatReport(`bench ${kind}`, report).trimEnd());
    return report;
  });
}

async function ensureTopic(client: Conch, topic: string, partitions: number): Promise<void> {
  try {
    await client.admin().createTopic(topic, { partitions });
    printStatus(`created topic ${topic} with ${partitions} partition${partitions === 1 ? "" : "s"}`);
  } catch (err) {
    if (!(err instanceof ConchError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
  }
}

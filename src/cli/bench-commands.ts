/**
 * `conch bench produce|consume|latency`: measures a running broker through the SDK's fastest paths
 * (sendBatch, consumer.batches()). Progress goes to stderr on a terminal; the result goes to stdout,
 * as one JSON line with --json.
 */
import { type Command, Option } from "commander";
import type { CodecName } from "../format/codecs/index.js";
import { withBroker } from "./client-options.js";
import { ACKS, type AcksName, compressionOption, integerParser } from "./options.js";

export interface BenchOptions {
  broker: string;
  topic: string;
  messages: number;
  size: number;
  batch: number;
  lingerMs: number;
  acks: AcksName;
  partitions: number;
  rate: number;
  inFlight: number;
  compression?: CodecName;
  json?: boolean;
}

type BenchKind = "produce" | "consume" | "latency";

const DESCRIPTIONS: Record<BenchKind, string> = {
  produce: "send --messages of --size bytes with sendBatch calls of --batch messages",
  consume: "read --messages from the topic's start with the batch API (fills the topic first if short)",
  latency: "send at --rate messages/s while a consumer reads them; end-to-end latency per message",
};

export function registerBenchCommands(program: Command): void {
  const bench = program.command("bench").description("measure throughput and latency against a broker");
  for (const kind of ["produce", "consume", "latency"] as const) {
    const command = withBroker(
      bench
        .command(kind)
        .description(DESCRIPTIONS[kind])
        .addOption(new Option("--topic <name>", "topic to use; created if missing").default("conch-bench"))
        .addOption(
          new Option("--messages <n>", "messages to send or read")
            .argParser(integerParser(1))
            .default(kind === "latency" ? 50_000 : 1_000_000),
        )
        .addOption(
          new Option("--size <bytes>", "value size")
            .argParser(integerParser(kind === "latency" ? 8 : 0))
            .default(100),
        )
        .addOption(
          new Option("--batch <n>", "messages per sendBatch call").argParser(integerParser(1)).default(1000),
        )
        .addOption(
          new Option("--linger-ms <ms>", "producer linger").argParser(integerParser(0, 60_000)).default(0),
        )
        .addOption(new Option("--acks <acks>", "producer acks").choices(ACKS).default("leader"))
        .addOption(
          new Option(
            "--in-flight <n>",
            "sendBatch calls in flight at once (produce, and filling for consume)",
          )
            .argParser(integerParser(1, 100_000))
            .default(4),
        )
        .addOption(
          new Option("--partitions <n>", "partitions when the topic is created")
            .argParser(integerParser(1, 10_000))
            .default(1),
        )
        .option("--json", "print the result as one JSON line"),
    );
    if (kind === "produce") command.addOption(compressionOption());
    if (kind === "latency") {
      command.addOption(
        new Option("--rate <msgs/s>", "messages per second to send")
          .argParser(integerParser(1))
          .default(10_000),
      );
    }
    command.action(async (o: BenchOptions) => {
      const { runBench } = await loadBenchRunner();
      await runBench(kind, o);
    });
  }
}

/**
 * Loaded here: the histogram and progress bar packages are for benchmarks only, so they are
 * optional dependencies (an install with `--omit=optional` leaves them out) and nothing else loads them.
 */
async function loadBenchRunner(): Promise<typeof import("./bench-runner.js")> {
  try {
    return await import("./bench-runner.js");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new Error(
      "conch bench needs the optional packages cli-progress and hdr-histogram-js: " +
        "install them, or install conchmq without --omit=optional",
    );
  }
}

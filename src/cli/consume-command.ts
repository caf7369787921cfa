/**
 * `conch consume TOPIC`: prints records as they arrive, from one partition or all of them, until
 * --max-messages are printed, nothing arrives for --timeout-ms, or SIGINT/SIGTERM. Records are read
 * with the SDK's batch API (a cursor over the fetched bytes, no object per record) and written to
 * stdout in large chunks; a slow reader slows the consumer down (the next batch is taken only after
 * the previous one is written), and a reader that goes away ends the command quietly.
 */
import type { Writable } from "node:stream";
import { type Command, Option } from "commander";
import type { Conch } from "../client/conch.js";
import type { ConsumerOptions, StartPosition } from "../client/consumer.js";
import { BatchCursor } from "../client/consumer-batch.js";
import type { OffsetResetEvent } from "../client/group-consumer.js";
import { withBroker } from "./client-options.js";
import { withClient } from "./client-session.js";
import { checkGroupFlags, groupConsumer } from "./group-commands.js";
import { integerParser, parseStartPosition, type StartPosition as StartFlag } from "./options.js";
import { printStatus } from "./output.js";
import { OutputBuffer, settled } from "./output-buffer.js";
import { ReaderWatch } from "./reader-watch.js";
import { FORMATS, type FormatName, recordWriter } from "./record-format.js";
import { checkTopic } from "./topic-check.js";

interface ConsumeFlags {
  broker: string;
  from: StartFlag;
  partition?: number;
  group?: string;
  maxMessages?: number;
  timeoutMs?: number;
  format: FormatName;
}

export function registerConsumeCommand(program: Command): void {
  withBroker(
    program
      .command("consume")
      .description("print the messages of a topic, one a line")
      .argument("<topic>")
      .addOption(
        new Option("-f, --from <position>", "earliest, latest, an offset, or @<timestamp-ms>")
          .argParser(parseStartPosition)
          .default(parseStartPosition("earliest"), "earliest"),
      )
      .addOption(
        new Option("-p, --partition <n>", "read only this partition (default: all)").argParser(
          integerParser(0),
        ),
      )
      .addOption(
        new Option(
          "-g, --group <group>",
          "read as a member of this consumer group, after its committed offsets (and commit)",
        ),
      )
      .addOption(
        new Option("-n, --max-messages <n>", "stop after this many messages").argParser(integerParser(1)),
      )
      .addOption(
        new Option("-t, --timeout-ms <ms>", "stop (exit 0) when nothing arrives for this long").argParser(
          integerParser(1),
        ),
      )
      .addOption(
        new Option("--format <format>", "value: the value alone; json: one object a line")
          .choices(FORMATS)
          .default("value"),
      )
      .addHelpText(
        "after",
        "\nWith --format json each line is {topic, partition, offset, timestamp, key, value}: timestamp in\n" +
          "ms since the epoch, key and value as UTF-8 text, key null when the message has none.\n\n" +
          "Examples:\n  conch consume orders --from earliest --timeout-ms 1000\n" +
          "  conch consume orders --partition 0 --from 1200 --max-messages 10 --format json",
      ),
  ).action(async (topic: string, o: ConsumeFlags) => {
    await withClient(o, (client) => consume(client, topic, o, process.stdout));
  });
}

/**
 * A group's committed position that retention deleted is skipped over to the earliest offset still
 * stored: messages in between are lost to this group, so it is said, once per partition, on stderr.
 */
export function logOffsetResets(
  group: { on(event: "offsetReset", listener: (e: OffsetResetEvent) => void): unknown },
  write: (line: string) => void,
): void {
  group.on("offsetReset", (e) =>
    write(
      `${e.topic} partition ${e.partition}: committed offset ${e.committed} was deleted by retention; reading from ${e.offset}`,
    ),
  );
}

/** Resolves with the number of messages written once a stop condition is met. */
export async function consume(
  client: Conch,
  topic: string,
  o: Omit<ConsumeFlags, "broker">,
  stdout: Writable,
): Promise<number> {
  if (o.group !== undefined) checkGroupFlags(o);
  await checkTopic(client, topic, o.partition);
  const from = startPosition(o.from);
  const options: ConsumerOptions =
    o.partition === undefined
      ? { topics: [topic], from }
      : { partitions: [{ topic, partition: o.partition }], from };
  const group = o.group === undefined ? null : groupConsumer(client, topic, { ...o, group: o.group });
  if (group !== null) logOffsetResets(group, printStatus);
  const consumer = group ?? client.consumer(options);
  const out = new OutputBuffer(stdout);
  const writer = recordWriter(o.format);
  const cursor = new BatchCursor();
  const max = o.maxMessages ?? Number.POSITIVE_INFINITY;
  let written = 0;

  // Stop conditions other than --max-messages close the consumer, which ends the batch iterator.
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    void consumer.close();
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
  // A reader that went away (`| head -3`) stops the command at once, also while no message comes.
  const reader = new ReaderWatch(stdout, stop, stdout === process.stdout ? undefined : null);
  // A failed write destroys the stream at once but reports the error a tick later.
  const readerGone = (): boolean => reader.gone || stdout.destroyed;
  // Time spent waiting for a slow reader is not idle time.
  let writing = false;
  const onIdle = (): void => {
    if (writing) idle?.refresh();
    else stop();
  };
  let idle: NodeJS.Timeout | null = null;
  try {
    // The idle clock starts once every partition's start offset is known, not while connecting.
    await consumer.start();
    if (o.timeoutMs !== undefined) idle = setTimeout(onIdle, o.timeoutMs);
    const batches = consumer.batches();
    for (;;) {
      if (reader.probing) {
        await settled(stdout);
        reader.idle();
      }
      // Asking for the next batch counts the last one as read: not once the reader is gone.
      if (readerGone()) break;
      const r = await batches.next();
      reader.busy();
      if (r.done) break;
      writing = true;
      const batch = r.value;
      batch.cursor(cursor);
      writer.startBatch(batch.topic, batch.partition);
      while (written < max && cursor.next()) {
        writer.write(cursor, out);
        written++;
        if (out.full) await out.flush();
      }
      await out.flush();
      writing = false;
      idle?.refresh();
      if (written >= max) {
        // The group commits what was printed, up to the last record, when the consumer closes.
        if (!readerGone()) {
          group?.markProcessed({ topic: batch.topic, partition: batch.partition, offset: cursor.offset });
        }
        break;
      }
    }
  } catch (err) {
    // A signal while connecting fails the requests in flight: that is the stop asked for, not an error.
    if (!stopped) throw err;
  } finally {
    if (idle !== null) clearTimeout(idle);
    process.off("SIGINT", stop).off("SIGTERM", stop);
    reader.close();
    await consumer.close();
  }
  return written;
}

function startPosition(flag: StartFlag): StartPosition {
  switch (flag.kind) {
    case "offset":
      return { offset: flag.offset };
    case "timestamp":
      return { timestamp: flag.timestampMs };
    default:
      return flag.kind;
  }
}

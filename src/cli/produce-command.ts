/**
 * `conch produce TOPIC`: one message per line of stdin. stdin is read a chunk at a time and the
 * next chunk is read only when the producer has room again, so a stream of any size flows through
 * in bounded memory; each chunk's lines go out as one `sendBatch` call whose values are views of
 * the chunk (no copy, no string per line).
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import type { Producer, ProducerMessage } from "../client/producer.js";
import type { CodecName } from "../format/codecs/index.js";
import { withBroker } from "./client-options.js";
import { withClient } from "./client-session.js";
import { indexOfIn, LineSplitter } from "./line-splitter.js";
import { ACKS, type AcksName, compressionOption, integerParser, parseSeparator } from "./options.js";
import { printLine } from "./output.js";
import { checkTopic } from "./topic-check.js";

interface ProduceFlags {
  broker: string;
  keySeparator?: Buffer;
  /** `--header k=v`, in the order given, repeats kept. */
  header?: [string, string][];
  /** `--null-empty`: an empty value is sent as null. */
  nullEmpty?: boolean;
  partition?: number;
  acks: AcksName;
  lingerMs: number;
  compression: CodecName;
}

export function registerProduceCommand(program: Command): void {
  withBroker(
    program
      .command("produce")
      .description("send each line of stdin as one message; print how many were acknowledged")
      .argument("<topic>")
      .addOption(
        new Option(
          "-k, --key-separator <sep>",
          "split each line at the first SEP into key and value (\\t for a tab)",
        ).argParser(parseSeparator),
      )
      .addOption(
        new Option("-H, --header <key=value>", "add this header to every message (repeatable)").argParser(
          collectHeader,
        ),
      )
      .addOption(
        new Option(
          "-Z, --null-empty",
          "send an empty value as null: with a key, a tombstone that compaction deletes the key by",
        ),
      )
      .addOption(
        new Option(
          "-p, --partition <n>",
          "send every message to this partition (default: by key, or spread)",
        ).argParser(integerParser(0)),
      )
      .addOption(
        new Option("-a, --acks <acks>", "when the broker acknowledges").choices(ACKS).default("leader"),
      )
      .addOption(
        new Option("--linger-ms <ms>", "wait this long for a batch to fill")
          .argParser(integerParser(0, 60_000))
          .default(0),
      )
      .addOption(compressionOption())
      .addHelpText(
        "after",
        "\nA line ends at \\n (a \\r before it is dropped); an empty line is an empty message.\n" +
          "Without --key-separator messages have no key. With it, a line that lacks SEP, or has nothing\n" +
          "before it, has no key.\n\n" +
          "Examples:\n  seq 1 1000 | conch produce numbers\n  printf 'user1\\tlogin\\n' | conch produce events --key-separator '\\t'",
      ),
  ).action(async (topic: string, o: ProduceFlags) => {
    // SIGINT/SIGTERM end the input early: what was read is still sent and counted.
    let interrupted = false;
    const interrupt = (): void => {
      interrupted = true;
      process.stdin.destroy();
    };
    process.once("SIGINT", interrupt).once("SIGTERM", interrupt);
    const acknowledged = await withClient(o, async (client) => {
      await checkTopic(client, topic, o.partition, true);
      const producer = client.producer({ acks: o.acks, lingerMs: o.lingerMs, compression: o.compression });
      return produceLines(producer, topic, process.stdin, o, () => interrupted);
    }).finally(() => process.off("SIGINT", interrupt).off("SIGTERM", interrupt));
    printLine(
      `${acknowledged} message${acknowledged === 1 ? "" : "s"} ${o.acks === "none" ? "sent" : "acknowledged"}`,
    );
  });
}

/** Sends every line of `input`; resolves with the number acknowledged, or rejects with the first failure. */
export async function produceLines(
  producer: Producer,
  topic: string,
  input: AsyncIterable<Buffer>,
  o: Pick<ProduceFlags, "keySeparator" | "partition" | "header" | "nullEmpty">,
  interrupted: () => boolean = () => false,
): Promise<number> {
  const splitter = new LineSplitter();
  const sep = o.keySeparator;
  const partition = o.partition;
  // One list for every message: the producer only reads it.
  const headers = o.header ?? null;
  const nullEmpty = o.nullEmpty === true;
  let batch: ProducerMessage[] = [];
  let acknowledged = 0;
  let failure: unknown = null;
  const inFlight = new Set<Promise<void>>();

  const onLine = (buf: Buffer, start: number, end: number): void => {
    let key: Buffer | null = null;
    let valueStart = start;
    if (sep !== undefined) {
      const at = indexOfIn(buf, sep, start, end);
      if (at >= 0) {
        // Nothing before SEP is no key, as before the format could hold an empty one.
        if (at > start) key = buf.subarray(start, at);
        valueStart = at + sep.length;
      }
    }
    const value = nullEmpty && valueStart === end ? null : buf.subarray(valueStart, end);
    batch.push({ key, value, partition, headers });
  };
  const send = (): void => {
    if (batch.length === 0) return;
    const count = batch.length;
    const p = producer.sendBatch(topic, batch).then(
      () => {
        acknowledged += count;
        inFlight.delete(p);
      },
      (err: unknown) => {
        failure ??= err;
        inFlight.delete(p);
      },
    );
    inFlight.add(p);
    batch = [];
  };

  try {
    for await (const chunk of input) {
      splitter.push(chunk, onLine);
      send();
      if (failure !== null) break;
      // Backpressure: stdin is not read again until the producer has buffer room.
      if (!producer.hasRoom) await producer.waitForRoom();
    }
    // The last line needs no newline, unless the input was cut short: then it may be half a line.
    splitter.end(onLine);
  } catch (err) {
    if (!interrupted()) throw err;
  }
  if (failure === null) send();
  await Promise.all(inFlight);
  if (failure !== null) throw failure;
  return acknowledged;
}

/** Accumulates repeated `--header key=value` options, in order (a key may repeat; the value may be empty). */
function collectHeader(text: string, previous: [string, string][] = []): [string, string][] {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got "${text}"`);
  return [...previous, [text.slice(0, eq), text.slice(eq + 1)]];
}

/**
 * Headers, null and empty keys and values across the two protocols, with real clients: what kcat
 * and kafkajs produce, the native SDK reads byte for byte, and the other way round (the SDK and
 * `conch produce` on one side, kcat and kafkajs on the other). A tombstone (null value) and an
 * empty value stay apart, as do a null key and an empty one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../../src/index.js";
import { CONCH } from "../../cli/cli-harness.js";
import { hasTool, runTool, startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

const KCAT_INSTALL = "apt-get install -y kcat";
/** Offset, key length (-1: null), value length (-1: null), headers (k=v CSV, NULL for null). */
const KCAT_FORMAT = "%o %K %S [%h] %k|%s\n";

async function kcat(args: string[], input = ""): Promise<string> {
  const r = await runTool("kcat", args, input);
  assert.equal(r.code, 0, `kcat ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString("latin1");
}

interface Seen {
  offset: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

/** The first `n` messages of partition 0 of `topic`, read with the native SDK. */
async function nativeRead(native: string, topic: string, n: number): Promise<Seen[]> {
  const client = createClient({ brokers: [native] });
  try {
    const seen: Seen[] = [];
    for await (const m of client.consumer({ topics: [topic], from: "earliest" })) {
      seen.push({
        offset: m.offset,
        key: m.key === null ? null : m.key.toString("latin1"),
        value: m.valueIsNull ? null : m.value.toString("latin1"),
        headers: m.headers.map((h) => [h.key, h.value === null ? null : h.value.toString("latin1")]),
      });
      if (seen.length === n) break;
    }
    return seen;
  } finally {
    await client.close();
  }
}

test("kcat -H produce: the native SDK reads headers, null and empty keys and values byte for byte", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const f = await startKafka(t);
  await f.broker.createTopic("kcat-h", 1);
  const P = ["-b", f.bootstrap, "-P", "-t", "kcat-h", "-p", "0", "-K:"];
  // -Z: an empty key or value is sent as null; without it, as empty. A header without "=" is null.
  await kcat([...P, "-Z", "-H", "trace=abc", "-H", "b=", "-H", "trace=def"], "k1:v1\n:no key\nk3:\n");
  await kcat([...P, "-H", "nul"], ":empty key\nk5:\n");
  const all = [
    ["trace", "abc"],
    ["b", ""],
    ["trace", "def"],
  ] as [string, string | null][];
  assert.deepEqual(await nativeRead(f.native, "kcat-h", 5), [
    { offset: 0, key: "k1", value: "v1", headers: all },
    { offset: 1, key: null, value: "no key", headers: all },
    { offset: 2, key: "k3", value: null, headers: all },
    { offset: 3, key: "", value: "empty key", headers: [["nul", null]] },
    { offset: 4, key: "k5", value: "", headers: [["nul", null]] },
  ]);
  // And back out through Kafka as they came.
  const out = await kcat([
    "-b",
    f.bootstrap,
    "-C",
    "-t",
    "kcat-h",
    "-o",
    "beginning",
    "-e",
    "-f",
    KCAT_FORMAT,
  ]);
  assert.equal(
    out,
    "0 2 2 [trace=abc,b=,trace=def] k1|v1\n" +
      "1 -1 6 [trace=abc,b=,trace=def] |no key\n" +
      "2 2 -1 [trace=abc,b=,trace=def] k3|\n" +
      "3 0 9 [nul=NULL] |empty key\n" +
      "4 2 0 [nul=NULL] k5|\n",
  );
});

test("native SDK and conch produce with headers: kcat -f '%h' shows them, tombstones apart from empty values", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("native-h", 1);
  const client = createClient({ brokers: [f.native] });
  clients.closeBeforeBroker(() => client.close());
  const producer = client.producer();
  const binary = Buffer.from([0, 0xff, 0x80, 0x0d]); // no \n: kcat output is split into lines
  await producer.send("native-h", {
    key: "a",
    value: binary,
    headers: [
      ["h1", "x"],
      ["h2", null],
      ["h1", ""],
    ],
    timestamp: 1_700_000_000_001,
    partition: 0,
  });
  await producer.send("native-h", { key: "a", value: null, partition: 0 });
  await producer.send("native-h", { key: "a", value: "", partition: 0 });
  await producer.send("native-h", { key: "", value: "v", partition: 0 });
  const cli = await runTool(
    process.execPath,
    [CONCH, "produce", "native-h", "-b", f.native, "-p", "0", "-k", ":", "-Z", "-H", "src=cli"],
    "ck:\nck:cv\n",
  );
  assert.equal(cli.code, 0, cli.stderr);
  const out = await kcat([
    "-b",
    f.bootstrap,
    "-C",
    "-t",
    "native-h",
    "-o",
    "beginning",
    "-e",
    "-f",
    "%o %T %K %S [%h] %k|%s\n",
  ]);
  const lines = out.split("\n");
  assert.equal(lines[0], `0 1700000000001 1 4 [h1=x,h2=NULL,h1=] a|${binary.toString("latin1")}`);
  assert.deepEqual(
    lines.slice(1, 6).map((l) => l.replace(/^(\d+) \d+ /, "$1 ")),
    ["1 1 -1 [] a|", "2 1 0 [] a|", "3 0 1 [] |v", "4 2 -1 [src=cli] ck|", "5 2 2 [src=cli] ck|cv"],
  );
});

test("kafkajs headers both ways: kafkajs to the native SDK, the native SDK to a kafkajs consumer", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("js-h", 1);
  const kafka = clients.kafkajs(f.bootstrap);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: "js-h",
    messages: [
      { key: "k", value: "v", headers: { "trace-id": "t-1", bin: Buffer.from([0, 0xfe]) }, partition: 0 },
      { key: "k", value: null, partition: 0 },
    ],
  });
  assert.deepEqual(await nativeRead(f.native, "js-h", 2), [
    {
      offset: 0,
      key: "k",
      value: "v",
      headers: [
        ["trace-id", "t-1"],
        ["bin", "\u0000\u00fe"],
      ],
    },
    { offset: 1, key: "k", value: null, headers: [] },
  ]);

  const client = createClient({ brokers: [f.native] });
  clients.closeBeforeBroker(() => client.close());
  await client.producer().send("js-h", {
    key: "n",
    value: "from conch",
    headers: { origin: "sdk", empty: "" },
    partition: 0,
  });
  const consumer = kafka.consumer({ groupId: "js-h-readers", maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: ["js-h"], fromBeginning: true });
  const got: [string, string | null, Record<string, string>][] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kafkajs read ${got.length} of 3 in 20 s`)), 20_000);
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
    consumer
      .run({
        eachMessage: async ({ message }) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
          got.push([message.offset, message.value === null ? null : message.value.toString(), headers]);
          if (got.length === 3) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  assert.deepEqual(got, [
    ["0", "v", { "trace-id": "t-1", bin: Buffer.from([0, 0xfe]).toString() }],
    ["1", null, {}],
    ["2", "from conch", { origin: "sdk", empty: "" }],
  ]);
});

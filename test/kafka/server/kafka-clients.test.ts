/**
 * Real Kafka clients against a live broker's Kafka listener: kcat (librdkafka), kafkajs,
 * kafka-python and confluent-kafka, and round trips across the two protocols (the native SDK on
 * one side, a Kafka client on the other) that must be byte for byte.
 *
 * kcat and the Python clients come from Debian (`apt-get install -y kcat python3-confluent-kafka
 * python3-kafka`, which .ci/run does); outside CI a test whose tool is missing is skipped.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../../src/index.js";
import { hasPythonModule, hasTool, PYTHON, runTool, startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

const KCAT_INSTALL = "apt-get install -y kcat";

/** kcat -C output in the format `KCAT_FORMAT`: offset, timestamp, key (null: -1) and value, exact. */
const KCAT_FORMAT = "%o %T %K %S\n%k%s\n";

interface Consumed {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer;
}

function parseKcat(out: Buffer): Consumed[] {
  const records: Consumed[] = [];
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    const [offset, timestamp, keyLength, valueLength] = out
      .toString("latin1", at, eol)
      .split(" ")
      .map(Number);
    at = eol + 1;
    const key = keyLength! < 0 ? null : out.subarray(at, at + keyLength!);
    at += Math.max(keyLength!, 0);
    const value = out.subarray(at, at + valueLength!);
    at += valueLength! + 1;
    records.push({ offset: offset!, timestamp: timestamp!, key, value });
  }
  return records;
}

async function kcat(args: string[], input = ""): Promise<Buffer> {
  const r = await runTool("kcat", args, input);
  assert.equal(r.code, 0, `kcat ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

test("kcat: metadata lists the broker as controller and the topics", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const f = await startKafka(t);
  await f.broker.createTopic("listed", 3);
  const out = (await kcat(["-b", f.bootstrap, "-L"])).toString();
  assert.match(out, new RegExp(`broker 0 at 127\\.0\\.0\\.1:${f.port} \\(controller\\)`));
  assert.match(out, /topic "listed" with 3 partitions/);
});

test("kcat: produce with keys, consume from the beginning and from an offset", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const f = await startKafka(t);
  await kcat(["-b", f.bootstrap, "-P", "-t", "kc", "-K:"], "k1:first\nk2:second\nk3:third\n");
  const all = parseKcat(
    await kcat(["-b", f.bootstrap, "-C", "-t", "kc", "-o", "beginning", "-e", "-f", KCAT_FORMAT]),
  );
  assert.deepEqual(
    all.map((r) => [r.offset, r.key?.toString(), r.value.toString()]),
    [
      [0, "k1", "first"],
      [1, "k2", "second"],
      [2, "k3", "third"],
    ],
  );
  const fromOne = parseKcat(
    await kcat(["-b", f.bootstrap, "-C", "-t", "kc", "-o", "1", "-e", "-f", KCAT_FORMAT]),
  );
  assert.deepEqual(
    fromOne.map((r) => r.offset),
    [1, 2],
  );
  const latest = (await kcat(["-b", f.bootstrap, "-Q", "-t", "kc:0:-1"])).toString();
  assert.match(latest, /kc \[0\] offset 3/);
});

test("cross-protocol: what the native SDK produces, kcat consumes byte for byte", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("native-in", 1);
  const client = createClient({ brokers: [f.native] });
  clients.closeBeforeBroker(() => client.close());
  const binary = Buffer.from([0, 1, 2, 0xff, 0x0a, 0x0d, 0x80, 0]);
  const sent = [
    { key: Buffer.from("user-7"), value: binary, timestamp: 1_700_000_000_123 },
    { key: null, value: Buffer.from("no key"), timestamp: 1_700_000_000_456 },
    { key: Buffer.from([0xc3, 0x28]), value: Buffer.alloc(0), timestamp: 1_700_000_000_789 },
  ];
  const producer = client.producer();
  for (const m of sent) await producer.send("native-in", { ...m, partition: 0 });
  const got = parseKcat(
    await kcat(["-b", f.bootstrap, "-C", "-t", "native-in", "-o", "beginning", "-e", "-f", KCAT_FORMAT]),
  );
  assert.deepEqual(
    got,
    sent.map((m, offset) => ({ offset, ...m })),
  );
});

test("cross-protocol: what kcat produces, the native SDK and kafka-python consume byte for byte", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("kafka-in", 1);
  await kcat(
    ["-b", f.bootstrap, "-P", "-t", "kafka-in", "-p", "0", "-K:"],
    "alpha:one\nbeta:two\ngamma:three\n",
  );
  const client = createClient({ brokers: [f.native] });
  clients.closeBeforeBroker(() => client.close());
  const consumer = client.consumer({ topics: ["kafka-in"], from: "earliest" });
  const seen: [number, string | null, string][] = [];
  for await (const m of consumer) {
    seen.push([m.offset, m.key?.toString() ?? null, m.value.toString()]);
    if (seen.length === 3) break;
  }
  assert.deepEqual(seen, [
    [0, "alpha", "one"],
    [1, "beta", "two"],
    [2, "gamma", "three"],
  ]);

  if (!hasPythonModule(t, "kafka", "apt-get install -y python3-kafka")) return;
  const script = `
import sys
from kafka import KafkaConsumer, TopicPartition
c = KafkaConsumer(bootstrap_servers=sys.argv[1], consumer_timeout_ms=5000)
tp = TopicPartition("kafka-in", 0)
c.assign([tp]); c.seek_to_beginning(tp)
for m in c:
    print(m.offset, m.key.hex(), m.value.hex())
    if m.offset == 2: break
`;
  const r = await runTool(PYTHON, ["-c", script, f.bootstrap]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout.toString(),
    `0 ${Buffer.from("alpha").toString("hex")} ${Buffer.from("one").toString("hex")}\n` +
      `1 ${Buffer.from("beta").toString("hex")} ${Buffer.from("two").toString("hex")}\n` +
      `2 ${Buffer.from("gamma").toString("hex")} ${Buffer.from("three").toString("hex")}\n`,
  );
});

test("kafka-python: produce and metadata", async (t) => {
  if (!hasPythonModule(t, "kafka", "apt-get install -y python3-kafka")) return;
  const f = await startKafka(t);
  const script = `
import sys
from kafka import KafkaProducer, KafkaAdminClient
p = KafkaProducer(bootstrap_servers=sys.argv[1], acks=1)
print(p.send("py-topic", key=b"k", value=b"\\x00v").get(timeout=10).offset)
print(p.send("py-topic", value=b"w").get(timeout=10).offset)
p.close()
a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
print(sorted(a.list_topics()))
`;
  const r = await runTool(PYTHON, ["-c", script, f.bootstrap]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.toString(), "0\n1\n['py-topic']\n");
  assert.equal(f.broker.partition("py-topic", 0).highWatermark, 2);
});

test("confluent-kafka: an idempotent producer's produce, and metadata", async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "apt-get install -y python3-confluent-kafka")) return;
  const f = await startKafka(t);
  const script = `
import sys
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
# Idempotent: librdkafka asks InitProducerId for a producer id first.
p = Producer({"bootstrap.servers": sys.argv[1], "enable.idempotence": True})
got = []
for v in (b"a", b"b"):
    p.produce("ck-topic", key=b"k", value=v, on_delivery=lambda e, m: got.append((str(e), m.offset())))
p.flush(10)
print(got)
md = AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=10)
print(sorted(md.topics), md.controller_id)
`;
  const r = await runTool(PYTHON, ["-c", script, f.bootstrap]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.toString(), "[('None', 0), ('None', 1)]\n['ck-topic'] 0\n");
});

test("kafkajs: admin creates, lists and deletes topics; the producer sends with acks 0, 1 and -1", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t, { autoCreateTopics: false });
  const kafka = clients.kafkajs(f.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  assert.equal(await admin.createTopics({ topics: [{ topic: "js", numPartitions: 2 }] }), true);
  assert.equal(await admin.createTopics({ topics: [{ topic: "gone" }] }), true);
  assert.deepEqual((await admin.listTopics()).sort(), ["gone", "js"]);
  await assert.rejects(
    admin.createTopics({ topics: [{ topic: "bad", replicationFactor: 3 }] }),
    (err: { errors?: { type?: string }[] }) => err.errors?.[0]?.type === "INVALID_REPLICATION_FACTOR",
  );
  await admin.deleteTopics({ topics: ["gone"] });
  assert.deepEqual(await admin.listTopics(), ["js"]);
  await admin.createPartitions({ topicPartitions: [{ topic: "js", count: 3 }] });
  const meta = await admin.fetchTopicMetadata({ topics: ["js"] });
  assert.equal(meta.topics[0]!.partitions.length, 3);

  const producer = kafka.producer();
  await producer.connect();
  for (const acks of [1, -1]) {
    const [r] = await producer.send({
      topic: "js",
      acks,
      messages: [{ key: "k", value: `acks ${acks}`, partition: 0 }],
    });
    assert.equal(r!.errorCode, 0);
  }
  // acks 0: no response comes; kafkajs resolves without one. A later acks-1 send lands after it.
  await producer.send({ topic: "js", acks: 0, messages: [{ value: "acks 0", partition: 0 }] });
  const [last] = await producer.send({ topic: "js", acks: 1, messages: [{ value: "after", partition: 0 }] });
  assert.equal(last!.baseOffset, "3");
  const offsets = await admin.fetchTopicOffsets("js");
  assert.equal(offsets.find((o) => o.partition === 0)!.high, "4");
});

/**
 * Compressed batches from real Kafka clients: stored compressed as they came (the segment's Kafka
 * batch keeps its codec), consumed byte for byte by the client and by the native SDK. One test per
 * client and codec. A codec that src/format/codecs does not have yet (it answers
 * UNSUPPORTED_COMPRESSION) skips its test, as does a client library without that codec: each passes
 * as soon as both exist.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { type TestContext, test } from "node:test";
import { CompressionTypes } from "kafkajs";
import { type CodecId, compress } from "../../../src/format/codecs/index.js";
import { ConchError, ErrorCode } from "../../../src/format/errors.js";
import { createClient } from "../../../src/index.js";
import {
  hasPythonModule,
  type KafkaFixture,
  PYTHON,
  runTool,
  startKafka,
  storedCodecs,
} from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

const CODECS: [CodecId, string, string][] = [
  [1, "gzip", "gzip"],
  [2, "snappy", "snappy"],
  [3, "lz4", "lz4"],
  [4, "zstd", "zstandard"],
];

/** Whether Conch has `codec`; skips the test when it does not yet. */
function conchHas(t: TestContext, codec: CodecId, name: string): boolean {
  try {
    compress(codec, Buffer.from("probe"));
    return true;
  } catch (e) {
    if (!(e instanceof ConchError) || e.code !== ErrorCode.UNSUPPORTED_COMPRESSION) throw e;
    t.skip(`src/format/codecs has no ${name} yet`);
    return false;
  }
}

/**
 * Whether Debian's python has the codec module kafka-python needs. .ci/run installs them, so in CI
 * (`CI` set) a missing one fails the test; elsewhere it skips, saying what to install.
 */
function pythonHas(t: TestContext, module: string): boolean {
  if (spawnSync(PYTHON, ["-c", `import ${module}`], { stdio: "ignore" }).status === 0) return true;
  if (process.env.CI !== undefined && process.env.CI !== "") {
    throw new Error(`python's ${module} module is needed in CI: apt-get install -y python3-${module}`);
  }
  t.skip(`python's ${module} module is not installed (apt-get install -y python3-${module})`);
  return false;
}

const messages = Array.from({ length: 40 }, (_, i) => ({
  key: `key-${i}`,
  value: `value ${i} ${"abc".repeat(20)}`,
}));

async function nativeReads(f: KafkaFixture, topic: string): Promise<string[]> {
  const client = createClient({ brokers: [f.native] });
  try {
    const consumer = client.consumer({ topics: [topic], from: "earliest" });
    const seen: string[] = [];
    for await (const m of consumer) {
      seen.push(`${m.key?.toString()}=${m.value.toString()}`);
      if (seen.length === messages.length) break;
    }
    return seen;
  } finally {
    await client.close();
  }
}

const expected = messages.map((m) => `${m.key}=${m.value}`);

test("kafkajs gzip: stored gzip-compressed, consumed by kafkajs and the native SDK", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("js-gzip", 1);
  const kafka = clients.kafkajs(f.bootstrap);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: "js-gzip", compression: CompressionTypes.GZIP, messages });
  assert.deepEqual(await storedCodecs(f, "js-gzip"), [1]);
  const consumer = kafka.consumer({ groupId: "js-gzip-reader" });
  await consumer.connect();
  await consumer.subscribe({ topic: "js-gzip", fromBeginning: true });
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
    void consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(`${message.key?.toString()}=${message.value?.toString()}`);
        if (seen.length === messages.length) resolve();
      },
    });
  });
  assert.deepEqual(seen, expected);
  assert.deepEqual(await nativeReads(f, "js-gzip"), expected);
});

for (const [codec, name, pyModule] of CODECS) {
  test(`kafka-python ${name}: stored compressed as it came, consumed by kafka-python and the native SDK`, async (t) => {
    if (!hasPythonModule(t, "kafka", "apt-get install -y python3-kafka")) return;
    if (codec !== 1 && !pythonHas(t, pyModule)) return;
    if (!conchHas(t, codec, name)) return;
    const f = await startKafka(t);
    const topic = `py-${name}`;
    await f.broker.createTopic(topic, 1);
    const script = `
import sys, json
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
msgs = json.loads(sys.argv[3])
p = KafkaProducer(bootstrap_servers=sys.argv[1], compression_type=sys.argv[2], linger_ms=100, batch_size=1 << 20)
for m in msgs: p.send("${topic}", key=m["key"].encode(), value=m["value"].encode(), partition=0)
p.flush(10)
c = KafkaConsumer(bootstrap_servers=sys.argv[1], consumer_timeout_ms=5000)
tp = TopicPartition("${topic}", 0)
c.assign([tp]); c.seek_to_beginning(tp)
n = 0
for m in c:
    print(m.key.decode() + "=" + m.value.decode())
    n += 1
    if n == len(msgs): break
`;
    const r = await runTool(PYTHON, ["-c", script, f.bootstrap, name, JSON.stringify(messages)]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.toString().trim().split("\n"), expected);
    const codecs = await storedCodecs(f, topic);
    assert.ok(codecs.length > 0 && codecs.every((c) => c === codec), `stored codecs ${codecs}`);
    assert.deepEqual(await nativeReads(f, topic), expected);
  });
}

for (const [codec, name] of CODECS) {
  test(`confluent-kafka compression.type=${name}: stored compressed as it came, consumed by librdkafka and the native SDK`, async (t) => {
    if (!hasPythonModule(t, "confluent_kafka", "apt-get install -y python3-confluent-kafka")) return;
    if (!conchHas(t, codec, name)) return;
    const f = await startKafka(t);
    const topic = `ck-${name}`;
    await f.broker.createTopic(topic, 1);
    const script = `
import sys, json
from confluent_kafka import Producer, Consumer, TopicPartition
msgs = json.loads(sys.argv[3])
p = Producer({"bootstrap.servers": sys.argv[1], "compression.type": sys.argv[2], "linger.ms": 50})
for m in msgs: p.produce("${topic}", key=m["key"].encode(), value=m["value"].encode(), partition=0)
assert p.flush(10) == 0
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "ck", "enable.auto.commit": False})
c.assign([TopicPartition("${topic}", 0, 0)])
n = 0
while n < len(msgs):
    m = c.poll(10)
    if m is None: break
    if m.error(): raise Exception(m.error())
    print(m.key().decode() + "=" + m.value().decode())
    n += 1
c.close()
`;
    const r = await runTool(PYTHON, ["-c", script, f.bootstrap, name, JSON.stringify(messages)]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.toString().trim().split("\n"), expected);
    // librdkafka compresses only when Produce v0 is advertised (docs/kafka.md, "Versions").
    const codecs = await storedCodecs(f, topic);
    assert.ok(codecs.length > 0 && codecs.every((c) => c === codec), `stored codecs ${codecs}`);
    assert.deepEqual(await nativeReads(f, topic), expected);
  });
}

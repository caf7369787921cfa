/**
 * Real clients' idempotent producers against a lost acknowledgment: librdkafka
 * (enable.idempotence) and kafkajs (idempotent: true) produce through a proxy that stores their
 * first produce and drops its answer; they retry it, and every message is stored exactly once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { StoredKafkaToConch } from "../../../src/format/kafka/stored-kafka.js";
import { RecordCursor } from "../../../src/format/record-cursor.js";
import type { KafkaFixture } from "../server/kafka-harness.js";
import { hasPythonModule, PYTHON, runTool, startKafka } from "../server/kafka-harness.js";
import { TestClients } from "../server/test-clients.js";
import { AckDroppingProxy } from "./ack-dropping-proxy.js";

/** The values stored in partition 0, Kafka batches read as a native reader gets them. */
async function storedValues(f: KafkaFixture, topic: string): Promise<string[]> {
  const log = f.broker.partition(topic, 0);
  const { records } = await log.read(log.logStartOffset, 1 << 20);
  const cursor = new RecordCursor(new StoredKafkaToConch().convert(records));
  const values: string[] = [];
  while (cursor.next()) values.push(cursor.value().toString());
  return values;
}

async function behindProxy(
  t: Parameters<typeof startKafka>[0],
): Promise<{ f: KafkaFixture; proxy: AckDroppingProxy }> {
  const f = await startKafka(t, { kafkaAdvertisedHost: "127.0.0.2" });
  const proxy = await AckDroppingProxy.start(f.port);
  t.after(() => proxy.close());
  return { f, proxy };
}

test("librdkafka enable.idempotence: a produce whose ack is lost is retried and stored once", async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "apt-get install -y python3-confluent-kafka")) return;
  const { f, proxy } = await behindProxy(t);
  await f.broker.createTopic("lost-ack", 1);
  const script = `
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "enable.idempotence": True, "linger.ms": 0})
errors = []
def done(e, m):
    if e is not None: errors.append(str(e))
for i in range(20):
    p.produce("lost-ack", partition=0, value=b"m%d" % i, on_delivery=done)
    p.poll(0)
left = p.flush(30)
print(left, errors)
`;
  const r = await runTool(PYTHON, ["-c", script, `127.0.0.2:${f.port}`], "", 60_000);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.toString(), "0 []\n");
  assert.equal(proxy.dropped, 1, "the fault fired");
  assert.deepEqual(
    await storedValues(f, "lost-ack"),
    Array.from({ length: 20 }, (_, i) => `m${i}`),
  );
});

test("kafkajs idempotent: a produce whose ack is lost is retried and stored once", async (t) => {
  const clients = new TestClients(t);
  const { f, proxy } = await behindProxy(t);
  await f.broker.createTopic("lost-ack-js", 1);
  const kafka = clients.kafkajs(`127.0.0.2:${f.port}`, {
    clientId: "conch-idempotence",
    retry: { initialRetryTime: 50, retries: 10 },
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < 10; i++) {
    await producer.send({ topic: "lost-ack-js", acks: -1, messages: [{ value: `j${i}`, partition: 0 }] });
  }
  assert.equal(proxy.dropped, 1, "the fault fired");
  assert.deepEqual(
    await storedValues(f, "lost-ack-js"),
    Array.from({ length: 10 }, (_, i) => `j${i}`),
  );
});

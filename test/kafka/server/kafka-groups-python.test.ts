/**
 * Consumer groups with the Python clients (Debian's python3-confluent-kafka and python3-kafka),
 * end to end on a real broker: a group member consumes part of a topic and commits; a second
 * run of the group resumes from the committed offsets, and `conch group describe` shows them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../../src/index.js";
import { CONCH } from "../../cli/cli-harness.js";
import { hasPythonModule, PYTHON, runTool, startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

/** Consumes `n` messages as a member of `group`, commits them, prints "partition offset value" lines. */
const CONFLUENT = `
import sys, time
from confluent_kafka import Consumer
bootstrap, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "session.timeout.ms": 10000})
c.subscribe([topic])
got, deadline = 0, time.time() + 20
while got < n and time.time() < deadline:
    m = c.poll(0.5)
    if m is None: continue
    if m.error(): sys.exit("consume error: %s" % m.error())
    print(m.partition(), m.offset(), m.value().decode())
    got += 1
c.commit(asynchronous=False)
c.close()
`;

const KAFKA_PYTHON = `
import sys
from kafka import KafkaConsumer
bootstrap, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                  enable_auto_commit=False, consumer_timeout_ms=20000)
got = 0
for m in c:
    print(m.partition, m.offset, m.value.decode())
    got += 1
    if got == n: break
c.commit()
c.close()
`;

for (const [name, module, pkg, script] of [
  ["confluent-kafka", "confluent_kafka", "python3-confluent-kafka", CONFLUENT],
  ["kafka-python", "kafka", "python3-kafka", KAFKA_PYTHON],
] as const) {
  test(`${name} group: consume and commit, then a new run of the group resumes from the commits`, async (t) => {
    if (!hasPythonModule(t, module, `apt-get install -y ${pkg}`)) return;
    const clients = new TestClients(t);
    const f = await startKafka(t);
    await f.broker.createTopic("py", 2);
    const client = createClient({ brokers: [f.native] });
    clients.closeBeforeBroker(() => client.close());
    const producer = client.producer();
    for (let i = 0; i < 6; i++) await producer.send("py", { value: `a${i}`, partition: 0 });
    for (let i = 0; i < 4; i++) await producer.send("py", { value: `b${i}`, partition: 1 });

    const run = async (n: number): Promise<string[]> => {
      const r = await runTool(PYTHON, ["-c", script, f.bootstrap, "py", "py-group", String(n)], "", 40_000);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.toString().trim().split("\n");
    };
    const first = await run(5);
    assert.equal(first.length, 5);
    const second = await run(5);
    // Together, every message once: the second run started where the first committed.
    assert.deepEqual([...first, ...second].sort(), [
      "0 0 a0",
      "0 1 a1",
      "0 2 a2",
      "0 3 a3",
      "0 4 a4",
      "0 5 a5",
      "1 0 b0",
      "1 1 b1",
      "1 2 b2",
      "1 3 b3",
    ]);

    const described = await runTool(process.execPath, [
      CONCH,
      "group",
      "describe",
      "py-group",
      "-b",
      f.native,
    ]);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout.toString(), /^py +0 +- +6 +6 +0$/m);
    assert.match(described.stdout.toString(), /^py +1 +- +4 +4 +0$/m);
  });
}

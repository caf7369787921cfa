/**
 * Reads partitions back with confluent-kafka (librdkafka, Debian's python3-confluent-kafka): it
 * finds each partition's leader through Kafka Metadata by itself, and reads by assignment, so no
 * consumer group is involved. Lines "partition offset value" until every partition reaches its end.
 */
import { PYTHON, runTool } from "../kafka/server/kafka-harness.js";

const READER = `
import sys
from confluent_kafka import Consumer, TopicPartition
bootstrap, topic, ends = sys.argv[1], sys.argv[2], [int(e) for e in sys.argv[3].split(",")]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
              "fetch.wait.max.ms": 100, "topic.metadata.refresh.interval.ms": 500})
c.assign([TopicPartition(topic, p, 0) for p in range(len(ends))])
next_offset = [0] * len(ends)
out = sys.stdout
while any(next_offset[p] < ends[p] for p in range(len(ends))):
    m = c.poll(1.0)
    if m is None or m.error():
        continue
    out.write("%d %d %s\\n" % (m.partition(), m.offset(), m.value().decode()))
    next_offset[m.partition()] = m.offset() + 1
out.flush()
c.close()
`;

/** "partition/offset" -> value of every record below `ends[partition]`. */
export async function readWithLibrdkafka(
  bootstrap: string,
  topic: string,
  ends: readonly number[],
  timeoutMs = 30_000,
): Promise<Map<string, string>> {
  const r = await runTool(PYTHON, ["-c", READER, bootstrap, topic, ends.join(",")], "", timeoutMs);
  if (r.code !== 0) throw new Error(`the librdkafka reader failed (${r.code}): ${r.stderr}`);
  const seen = new Map<string, string>();
  for (const line of r.stdout.toString().split("\n")) {
    if (line === "") continue;
    const [partition, offset, ...value] = line.split(" ");
    seen.set(`${partition}/${offset}`, value.join(" "));
  }
  return seen;
}

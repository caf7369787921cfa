/**
 * Reads the replicas a stopped `conch broker` process left on disk, for comparing them byte for
 * byte: each data directory is opened in-process and its batches listed as (last offset, CRC).
 */
import { Broker } from "../../src/broker/broker.js";
import { StoredKafkaToConch } from "../../src/format/kafka/stored-kafka.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { batchCrcs } from "./replica-cluster.js";

/** (last offset, CRC) of every batch of topic/partition below `end` in each data directory. */
export async function replicaCrcs(
  dataDirs: readonly string[],
  topic: string,
  partition: number,
  end: number,
): Promise<string[][]> {
  const out: string[][] = [];
  for (const dataDir of dataDirs) {
    const broker = await Broker.open({ dataDir, segmentBytes: 1 << 20 });
    try {
      out.push(await batchCrcs(broker.partition(topic, partition), end));
    } finally {
      await broker.close();
    }
  }
  return out;
}

/** offset -> value (UTF-8) of every record of topic/partition below `end` in one data directory. */
export async function replicaValues(
  dataDir: string,
  topic: string,
  partition: number,
  end: number,
): Promise<Map<number, string>> {
  const values = new Map<number, string>();
  const broker = await Broker.open({ dataDir, segmentBytes: 1 << 20 });
  try {
    const log = broker.partition(topic, partition);
    const cursor = new RecordCursor();
    // Batches a Kafka client produced are stored as Kafka batches: read as a native reader would.
    const toConch = new StoredKafkaToConch();
    let offset = log.logStartOffset;
    while (offset < end) {
      const { records } = await log.readReplica(offset, 1 << 20);
      if (records.length === 0) break;
      cursor.reset(toConch.convert(records));
      while (cursor.next()) {
        if (cursor.offset < end) values.set(cursor.offset, cursor.value().toString());
        offset = cursor.offset + 1;
      }
    }
  } finally {
    await broker.close();
  }
  return values;
}

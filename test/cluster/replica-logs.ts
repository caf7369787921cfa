/**
 * Reads the replicas a stopped `conch broker` process left on disk, for comparing them byte for
 * byte: each data directory is opened in-process and its batches listed as (last offset, CRC).
 */
import { Broker } from "../../src/broker/broker.js";
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

/** Where an offsets reset moves a group's committed offsets, partition by partition. */
import type { GroupHost } from "./group-coordinator.js";
import type { ResetTarget } from "./group-requests.js";
import type { OffsetEntry } from "./offset-store.js";

/**
 * The offset each partition of `topic` moves to: its log start, its high watermark, what the
 * host's timestamp lookup (listOffsets) finds, or a given offset held within the partition's range.
 */
export async function resetPositions(
  host: Pick<GroupHost, "describeTopic" | "listOffsets" | "recovered">,
  topic: string,
  target: ResetTarget,
): Promise<OffsetEntry[]> {
  // The partitions' offsets: after a crash, each recovered log's.
  await host.recovered(topic);
  const partitions = host.describeTopic(topic).partitions;
  const entries: OffsetEntry[] = [];
  for (const p of partitions) {
    let offset: number;
    switch (target.to) {
      case "earliest":
        offset = p.logStartOffset;
        break;
      case "latest":
        offset = p.highWatermark;
        break;
      case "offset":
        offset = Math.min(Math.max(target.offset, p.logStartOffset), p.highWatermark);
        break;
      case "timestamp": {
        const found = await host.listOffsets(topic, p.partition, {
          kind: "timestamp",
          timestampMs: target.timestampMs,
        });
        offset = found.offset;
        break;
      }
    }
    entries.push({ topic, partition: p.partition, offset });
  }
  return entries;
}

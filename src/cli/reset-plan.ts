/**
 * What `conch group reset-offsets` would do, without doing it (the default; `--execute` applies
 * it): per partition of the topic, the group's committed offset and the one it would move to,
 * found as the broker finds it (earliest: the log start; latest: the high watermark; an offset:
 * brought into that range; a time: the first record at or after it). The group must exist: a
 * reset never creates one (UNKNOWN_GROUP).
 */
import { requireFigures } from "../client/admin.js";
import type { Conch } from "../client/conch.js";
import type { ResetPosition } from "../client/group-admin.js";
import { table } from "./table.js";

export interface PlannedReset {
  topic: string;
  partition: number;
  /** -1 when the group has committed nothing for the partition. */
  current: number;
  next: number;
}

export async function planReset(
  client: Conch,
  group: string,
  topic: string,
  to: ResetPosition,
): Promise<PlannedReset[]> {
  const described = await client.groups().describeGroup(group);
  const topicView = await client.admin().describeTopic(topic);
  requireFigures(topicView);
  const committed = new Map<number, number>();
  for (const p of described.partitions) if (p.topic === topic) committed.set(p.partition, p.committed);
  const plan: PlannedReset[] = [];
  for (const p of topicView.partitions) {
    let next: number;
    if (to === "earliest") next = p.logStartOffset;
    else if (to === "latest") next = p.highWatermark;
    else if ("offset" in to) next = Math.min(Math.max(to.offset, p.logStartOffset), p.highWatermark);
    else next = (await client.admin().listOffsets(topic, p.partition, { timestamp: to.timestamp })).offset;
    plan.push({ topic, partition: p.partition, current: committed.get(p.partition) ?? -1, next });
  }
  return plan;
}

/** The plan as aligned columns: TOPIC PARTITION CURRENT NEW (CURRENT `-` when none committed). */
export function planLines(plan: readonly PlannedReset[]): string[] {
  const rows = [["TOPIC", "PARTITION", "CURRENT", "NEW"]];
  for (const p of plan) {
    rows.push([p.topic, `${p.partition}`, p.current < 0 ? "-" : `${p.current}`, `${p.next}`]);
  }
  return table(rows);
}

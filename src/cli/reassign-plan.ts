/**
 * `conch topic reassign`'s moves: one from --partition and --replicas, or a plan file in the shape
 * kafka-reassign-partitions reads ({"version":1,"partitions":[{"topic","partition","replicas"}]}),
 * read with a size bound and checked field by field before anything is sent.
 */
import { readFile, stat } from "node:fs/promises";
import type { PartitionReassignment } from "../protocol/reassign-partitions.js";
import { UsageError } from "./usage-error.js";

/** A plan file larger than this is refused before it is read. */
export const MAX_PLAN_BYTES = 1 << 20;

/** "1,2,3" as broker ids. */
export function parseReplicaList(text: string): number[] {
  const ids = text.split(",").map((s) => s.trim());
  if (ids.some((s) => !/^(0|[1-9][0-9]{0,9})$/.test(s) || Number(s) > 2 ** 31 - 1))
    throw new UsageError(`--replicas expects broker ids separated by commas, got "${text}"`);
  return ids.map(Number);
}

export async function readReassignPlan(path: string): Promise<PartitionReassignment[]> {
  const size = (await stat(path)).size;
  if (size > MAX_PLAN_BYTES) throw new UsageError(`plan ${path} is ${size} bytes; at most ${MAX_PLAN_BYTES}`);
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new UsageError(`plan ${path} is not JSON: ${(err as Error).message}`);
  }
  const partitions = (doc as { partitions?: unknown } | null)?.partitions;
  if (!Array.isArray(partitions) || partitions.length === 0)
    throw new UsageError(`plan ${path}: expected {"partitions": [{"topic", "partition", "replicas"}, ...]}`);
  return partitions.map((entry: unknown, i) => {
    const e = entry as { topic?: unknown; partition?: unknown; replicas?: unknown } | null;
    const ok =
      typeof e?.topic === "string" &&
      Number.isSafeInteger(e.partition) &&
      (e.partition as number) >= 0 &&
      Array.isArray(e.replicas) &&
      e.replicas.every((id) => Number.isSafeInteger(id) && id >= 0 && id <= 2 ** 31 - 1);
    if (!ok)
      throw new UsageError(
        `plan ${path}: partitions[${i}] needs a topic, a partition and replicas (broker ids)`,
      );
    return { topic: e.topic as string, partition: e.partition as number, replicas: e.replicas as number[] };
  });
}

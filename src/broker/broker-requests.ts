/**
 * The domain values the broker's API speaks, whatever the front-end: each protocol maps its wire
 * numbers to these at its edge (server/data-handlers.ts for the native protocol).
 */
import type { AppendListener } from "../storage/partition-log.js";

/**
 * When a produce is acknowledged: never ("none", no answer is awaited), once the leader has it
 * ("leader"), once it is fsynced ("durable"), or once every in-sync replica has it ("all"; on a
 * single node the leader is the only replica, so it answers as "leader" does). Each front-end maps
 * its wire numbers to these at the edge.
 */
export type Acks = "none" | "leader" | "durable" | "all";

export const ACKS: ReadonlySet<string> = new Set<Acks>(["none", "leader", "durable", "all"]);

/** Which offset a ListOffsets asks for: the first kept, the next to be written, or by time. */
export type OffsetSpec =
  | { readonly kind: "earliest" }
  | { readonly kind: "latest" }
  | { readonly kind: "timestamp"; readonly timestampMs: number };

/**
 * Where a partitioned produce (produce version 3) is told what became of its records: deferred at
 * these first offsets, one per group of its index, the listener then told once the batch is in the
 * shared log (or failed); or to be split now into one append per partition, `batch` holding its
 * records (the request's, or a copy if it waited).
 */
export interface PartitionedProduce extends AppendListener {
  deferred(bases: readonly number[]): void;
  split(batch: Buffer): void;
}

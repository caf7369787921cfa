/**
 * What a partition's deferred run tells once it is written to the partition's file: one object per
 * shared log entry, shared by the entry's partitions, that counts the spill against the entry's
 * segment (shared-log.ts, `spilled`).
 */
import type { SpillSource } from "../deferred-records.js";
import type { SharedLog } from "./shared-log.js";

export class EntrySpills implements SpillSource {
  readonly #log: SharedLog;
  readonly #position: number;

  constructor(log: SharedLog, position: number) {
    this.#log = log;
    this.#position = position;
  }

  spilled(): void {
    this.#log.spilled(this.#position);
  }
}

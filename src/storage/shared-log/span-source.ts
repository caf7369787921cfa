/**
 * What a partition's deferred run tells once it is written to the partition's file: one object per
 * shared log entry, shared by the entry's partitions, that counts the spill against the entry's
 * segment (shared-log.ts, `spilled`) and, with `held`, the entry's bytes against what deferred
 * records hold in memory until its last run is written.
 */
import type { SpillSource } from "../deferred-records.js";
import type { SharedLog } from "./shared-log.js";

/** Bytes of entries whose records are not all spilled yet. */
export interface HeldBytes {
  bytes: number;
}

export class EntrySpills implements SpillSource {
  readonly #log: SharedLog;
  readonly #position: number;
  readonly #held: HeldBytes | null;
  readonly #bytes: number;
  #left: number;

  /** `runs` of the entry (of `bytes`) are deferred; with `held`, they count there until spilled. */
  constructor(log: SharedLog, position: number, runs = 0, bytes = 0, held: HeldBytes | null = null) {
    this.#log = log;
    this.#position = position;
    this.#left = runs;
    this.#bytes = bytes;
    this.#held = held;
    if (held !== null) held.bytes += bytes;
  }

  spilled(): void {
    this.#log.spilled(this.#position);
    if (this.#held !== null && --this.#left === 0) this.#held.bytes -= this.#bytes;
  }
}

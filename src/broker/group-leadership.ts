/**
 * Cluster mode's part of the group coordinator (docs/cluster.md, "Consumer groups"): the offsets
 * partitions this broker leads, and so the groups it coordinates. A partition gained is replayed
 * into the OffsetStore before its groups are served; a partition lost has its groups dropped at
 * once (the coordinator's `dropGroups` tells their waiting members NOT_COORDINATOR).
 */
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { OFFSETS_TOPIC, type OffsetStore } from "./offset-store.js";

export class OffsetsLeadership {
  readonly #offsets: OffsetStore;
  readonly #logger: Logger;
  readonly #dropGroups: (which: (group: string) => boolean) => void;
  /** The partitions led, ready once their commits are replayed. */
  readonly #led = new Map<number, { ready: boolean }>();

  constructor(offsets: OffsetStore, logger: Logger, dropGroups: (which: (group: string) => boolean) => void) {
    this.#offsets = offsets;
    this.#logger = logger;
    this.#dropGroups = dropGroups;
    offsets.holdLoadedOnly();
  }

  /** Leading `partition` (of `partitions`) now: replays it, then serves its groups. */
  async gained(partition: number, partitions: number): Promise<void> {
    const led = this.#led;
    if (led.has(partition)) return;
    const state = { ready: false };
    led.set(partition, state);
    try {
      await this.#offsets.loadPartition(partition, partitions);
    } catch (err) {
      this.#logger.warn({ err, partition }, "loading an offsets partition failed; its groups stay unserved");
      if (led.get(partition) === state) led.delete(partition);
      this.#offsets.dropPartition(partition);
      return;
    }
    // Lost again while it loaded: what the replay put in the table is not this broker's.
    if (led.get(partition) !== state) {
      if (!led.has(partition)) this.#offsets.dropPartition(partition);
      return;
    }
    state.ready = true;
    this.#logger.info({ partition }, "coordinating the groups of an offsets partition");
  }

  /** No longer leading `partition`: its groups are dropped, and their members find the coordinator again. */
  lost(partition: number): void {
    if (!this.#led.delete(partition)) return;
    this.#dropGroups((group) => this.#offsets.partitionOf(group) === partition);
    this.#offsets.dropPartition(partition);
    this.#logger.info({ partition }, "no longer coordinating the groups of an offsets partition");
  }

  /** Every partition is lost at once (the broker fenced itself). */
  fenced(): void {
    for (const partition of [...this.#led.keys()]) this.lost(partition);
  }

  /** Whether this broker serves `group` now. No allocation: a member's fetch asks. */
  serves(group: string): boolean {
    return this.#led.get(this.#offsets.partitionOf(group))?.ready === true;
  }

  /** NOT_COORDINATOR unless this broker serves `group` now. */
  check(group: string): void {
    const partition = this.#offsets.partitionOf(group);
    const state = this.#led.get(partition);
    if (state?.ready === true) return;
    throw new ConchError(
      ErrorCode.NOT_COORDINATOR,
      state === undefined
        ? `this broker does not coordinate group "${group}": find its coordinator (the leader of ${OFFSETS_TOPIC} partition ${partition})`
        : `group "${group}" is not served yet: its commits are being loaded`,
    );
  }
}

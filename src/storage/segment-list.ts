/**
 * A partition's segments in offset order; the last one is the active segment. Retention removes
 * from the front, rolls add at the back, compaction replaces closed ones, and a lookup is a binary
 * search over base offsets.
 */
import type { Segment } from "./segment.js";

export class SegmentList {
  #segments: Segment[];

  /** `segments` must be non-empty and in offset order. */
  constructor(segments: Segment[]) {
    this.#segments = segments;
  }

  get active(): Segment {
    return this.#segments[this.#segments.length - 1]!;
  }

  get all(): readonly Segment[] {
    return this.#segments;
  }

  get length(): number {
    return this.#segments.length;
  }

  get startOffset(): number {
    return this.#segments[0]!.baseOffset;
  }

  /** Bytes of data in all segments. */
  get sizeBytes(): number {
    let total = 0;
    for (const seg of this.#segments) total += seg.size;
    return total;
  }

  /** The segment holding `offset`: the last one whose base offset is at or below it. */
  find(offset: number): Segment | undefined {
    const list = this.#segments;
    let lo = 0;
    let hi = list.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? undefined : list[found];
  }

  /** The segment after `segment`, or undefined when it is the active one or no longer listed. */
  next(segment: Segment): Segment | undefined {
    const list = this.#segments;
    const i = list.indexOf(segment);
    return i < 0 ? undefined : list[i + 1];
  }

  /**
   * Compaction: puts `fresh` where the run `old` is. Changes nothing and returns false unless `old`
   * is still a run of closed segments in this list.
   */
  replace(old: readonly Segment[], fresh: readonly Segment[]): boolean {
    const list = this.#segments;
    const at = old.length === 0 ? -1 : list.indexOf(old[0]!);
    if (at < 0 || at + old.length >= list.length) return false;
    for (let i = 1; i < old.length; i++) if (list[at + i] !== old[i]) return false;
    list.splice(at, old.length, ...fresh);
    return true;
  }

  push(segment: Segment): void {
    this.#segments.push(segment);
  }

  /** Truncation: removes and returns the segments after `segment`, which becomes the active one. */
  removeAfter(segment: Segment): Segment[] {
    const i = this.#segments.indexOf(segment);
    return i < 0 ? [] : this.#segments.splice(i + 1);
  }

  /** The log starts over with `segment` alone (restartLog). */
  restart(segment: Segment): void {
    this.#segments = [segment];
  }

  /** Removes and returns the `n` oldest segments; never the active one. */
  removeOldest(n: number): Segment[] {
    return this.#segments.splice(0, Math.min(n, this.#segments.length - 1));
  }
}

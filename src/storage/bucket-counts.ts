/**
 * A histogram as plain numbers: a count per bucket, a sum and a count, filled by the layer that
 * measures and read by whoever exports it (src/http/ renders it in the Prometheus format at scrape
 * time). The storage and broker layers stay free of any metrics library, and an observation is a
 * short loop over a few bounds and two additions, with nothing allocated.
 */
export class BucketCounts {
  /** Upper bounds, ascending; values above the last land in the implicit +Inf bucket. */
  readonly bounds: readonly number[];
  sum = 0;
  count = 0;
  /** Made by the first observation: a partition log holds four, and most of 10,000 see none. */
  #counts: Float64Array | null = null;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
  }

  /** Non-cumulative: counts[i] holds values in (bounds[i-1], bounds[i]]; the last is +Inf. */
  get counts(): Float64Array {
    this.#counts ??= new Float64Array(this.bounds.length + 1);
    return this.#counts;
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** Adds `other`'s counts (same bounds) into this one: per-partition histograms summed for export. */
  add(other: BucketCounts): void {
    if (other.count === 0) return;
    const counts = this.counts;
    const theirs = other.counts;
    for (let i = 0; i < counts.length; i++) counts[i]! += theirs[i]!;
    this.sum += other.sum;
    this.count += other.count;
  }
}

/** Seconds, from 50 µs to 10 s: an append acknowledged from the page cache up to a slow fsync. */
export const LATENCY_SECONDS_BOUNDS: readonly number[] = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
];

/** Appends acknowledged by one fsync (group commit). */
export const GROUP_COMMIT_BOUNDS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

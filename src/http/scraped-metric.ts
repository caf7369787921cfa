/**
 * A metric whose samples are read at scrape time from plain fields the broker and its logs keep
 * (storage/log-stats.ts), registered with prom-client's registry so it is rendered with the
 * default process metrics. Nothing is recorded through prom-client on the data path: its
 * per-call label lookups would cost per produce what these fields cost per scrape.
 */
import type { Metric } from "prom-client";
import type { BucketCounts } from "../storage/bucket-counts.js";

export type Labels = Record<string, string | number>;

export interface Sample {
  labels: Labels;
  value: number;
  /** For histogram series: name_bucket, name_sum, name_count. */
  metricName?: string;
}

export type MetricType = "counter" | "gauge" | "histogram";

export class ScrapedMetric {
  readonly aggregator = "sum";

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly read: () => Sample[],
  ) {}

  /** What prom-client's registry asks every metric for. */
  async get(): Promise<{
    name: string;
    help: string;
    type: MetricType;
    aggregator: "sum";
    values: Sample[];
  }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.read(),
    };
  }

  /** The registry takes its own metric classes; this one has the shape it reads. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}

/** The samples of a histogram: cumulative buckets with `le`, then sum and count. */
export function histogramSamples(
  name: string,
  counts: BucketCounts,
  labels: Labels = {},
  out: Sample[] = [],
): Sample[] {
  let cumulative = 0;
  for (let i = 0; i < counts.bounds.length; i++) {
    cumulative += counts.counts[i]!;
    out.push({
      metricName: `${name}_bucket`,
      labels: { ...labels, le: counts.bounds[i]! },
      value: cumulative,
    });
  }
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: counts.count });
  out.push({ metricName: `${name}_sum`, labels, value: counts.sum });
  out.push({ metricName: `${name}_count`, labels, value: counts.count });
  return out;
}

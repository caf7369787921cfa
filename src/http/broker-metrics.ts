/**
 * The Prometheus registry of one broker: prom-client's default process metrics (event-loop lag,
 * GC, memory, CPU) and Conch's own, every one read at scrape time (docs/http-api.md, metrics).
 */
import { collectDefaultMetrics, Registry } from "prom-client";
import type { Broker } from "../broker/broker.js";
import { errorName } from "../format/errors.js";
import { sharedAppendMemory } from "../storage/append-memory.js";
import { BucketCounts, GROUP_COMMIT_BOUNDS, LATENCY_SECONDS_BOUNDS } from "../storage/bucket-counts.js";
import { storageFlushQueue } from "../storage/flush-queue.js";
import type { LogStats } from "../storage/log-stats.js";
import type { PartitionLog } from "../storage/partition-log.js";
import type { HttpContext } from "./http-context.js";
import { histogramSamples, type MetricType, type Sample, ScrapedMetric } from "./scraped-metric.js";

type PartitionValue = (log: PartitionLog, stats: LogStats) => number;

/** One series per partition, labelled topic and partition. */
const PARTITION_METRICS: ReadonlyArray<readonly [string, MetricType, string, PartitionValue]> = [
  ["conch_partition_messages_in_total", "counter", "Records appended", (_, s) => s.messagesIn],
  ["conch_partition_bytes_in_total", "counter", "Bytes of batches appended", (_, s) => s.bytesIn],
  ["conch_partition_messages_out_total", "counter", "Offsets delivered by fetches", (_, s) => s.messagesOut],
  [
    "conch_partition_bytes_out_total",
    "counter",
    "Bytes of batches returned by fetches",
    (_, s) => s.bytesOut,
  ],
  [
    "conch_partition_produce_requests_total",
    "counter",
    "Appends (produce requests) accepted",
    (_, s) => s.appends,
  ],
  ["conch_partition_fetch_requests_total", "counter", "Fetches answered", (_, s) => s.fetches],
  ["conch_partition_log_start_offset", "gauge", "First offset kept", (l) => l.logStartOffset],
  ["conch_partition_log_end_offset", "gauge", "Next offset to assign", (l) => l.logEndOffset],
  [
    "conch_partition_high_watermark",
    "gauge",
    "First offset not yet visible to readers",
    (l) => l.highWatermark,
  ],
  ["conch_partition_size_bytes", "gauge", "Bytes of batch data in the segments on disk", (l) => l.sizeBytes],
  ["conch_partition_segments", "gauge", "Segment files, the active one included", (l) => l.segmentCount],
  [
    "conch_partition_quarantined_ranges",
    "gauge",
    "Damaged ranges held in quarantine",
    (l) => l.quarantined().length,
  ],
  ["conch_partition_segments_rolled_total", "counter", "Segments rolled", (_, s) => s.segmentsRolled],
  [
    "conch_partition_segments_deleted_total",
    "counter",
    "Segments deleted by retention",
    (_, s) => s.segmentsDeleted,
  ],
  [
    "conch_partition_compaction_passes_total",
    "counter",
    "Compaction passes committed",
    (_, s) => s.compactionPasses,
  ],
  [
    "conch_partition_compaction_removed_bytes_total",
    "counter",
    "Bytes removed by compaction",
    (_, s) => s.compactionBytesRemoved,
  ],
];

type HistogramOf = (s: LogStats) => BucketCounts;

/** Summed over every partition (per-partition histograms would multiply the series by ~20). */
const HISTOGRAMS: ReadonlyArray<readonly [string, string, readonly number[], HistogramOf]> = [
  [
    "conch_produce_latency_seconds",
    "Append to acknowledgment, per produce",
    LATENCY_SECONDS_BOUNDS,
    (s) => s.appendSeconds,
  ],
  [
    "conch_fetch_latency_seconds",
    "Arrival to answer, per fetch (long-poll waits included)",
    LATENCY_SECONDS_BOUNDS,
    (s) => s.fetchSeconds,
  ],
  [
    "conch_fsync_duration_seconds",
    "Duration of each group-commit fsync",
    LATENCY_SECONDS_BOUNDS,
    (s) => s.fsyncSeconds,
  ],
  [
    "conch_group_commit_appends",
    "Appends acknowledged by one fsync",
    GROUP_COMMIT_BOUNDS,
    (s) => s.groupCommitAppends,
  ],
];

export interface BrokerMetricsOptions {
  /** Errors answered by the HTTP port itself, added to conch_errors_total. */
  httpErrors?: { addTo(into: Map<number, number>): void };
  /** prom-client's default process metrics (default true). */
  defaultMetrics?: boolean;
}

export function createMetricsRegistry(context: HttpContext, options: BrokerMetricsOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const each = (fn: (broker: Broker) => Sample[]): (() => Sample[]) => {
    return () => {
      const broker = context.broker;
      return broker === null ? [] : fn(broker);
    };
  };
  for (const [name, type, help, value] of PARTITION_METRICS) {
    const read = each((broker) => {
      const out: Sample[] = [];
      broker.forEachPartition((topic, partition, log) => {
        out.push({ labels: { topic, partition }, value: value(log, log.stats) });
      });
      return out;
    });
    registry.registerMetric(new ScrapedMetric(name, help, type, read).asMetric());
  }
  for (const [name, help, bounds, of] of HISTOGRAMS) {
    const read = each((broker) => {
      const sum = new BucketCounts(bounds);
      broker.forEachPartition((_t, _p, log) => sum.add(of(log.stats)));
      return histogramSamples(name, sum);
    });
    registry.registerMetric(new ScrapedMetric(name, help, "histogram", read).asMetric());
  }
  const gauge = (name: string, help: string, read: () => Sample[]): void =>
    registry.registerMetric(new ScrapedMetric(name, help, "gauge", read).asMetric());
  gauge(
    "conch_topics",
    "Topics, internal ones included",
    each((broker) => [{ labels: {}, value: broker.listTopics().length }]),
  );
  gauge("conch_connections", "Connections open now, per listener", () => {
    const out: Sample[] = [];
    for (const [listener, probe] of context.listeners)
      out.push({ labels: { listener }, value: probe.connections() });
    return out;
  });
  registry.registerMetric(
    new ScrapedMetric("conch_errors_total", "Requests answered with an error, by code", "counter", () => {
      const byCode = new Map<number, number>();
      const broker = context.broker;
      if (broker !== null) {
        broker.errors.addTo(byCode);
        broker.forEachPartition((_t, _p, log) => log.stats.errors.addTo(byCode));
      }
      options.httpErrors?.addTo(byCode);
      return [...byCode].map(([code, value]) => ({ labels: { code: errorName(code) }, value }));
    }).asMetric(),
  );
  registerFlushQueueMetrics(registry);
  registerAppendMemoryMetrics(registry);
  registerGroupMetrics(context, registry);
  return registry;
}

/**
 * The interval fsyncs' queue (flush-queue.ts), one for the process: how late the fsyncs of
 * flush=interval logs start when many logs are due at once.
 */
function registerFlushQueueMetrics(registry: Registry): void {
  const queue = storageFlushQueue;
  const delay = "conch_interval_fsync_delay_seconds";
  const metric = (name: string, help: string, type: MetricType, read: () => Sample[]): void =>
    registry.registerMetric(new ScrapedMetric(name, help, type, read).asMetric());
  metric(delay, "From an interval fsync's due time to its start", "histogram", () =>
    histogramSamples(delay, queue.delays),
  );
  const lag = "conch_interval_fsync_lag_seconds";
  metric(
    lag,
    "From an interval fsync's due time to its successful end: how long past the interval its data waited to be durable",
    "histogram",
    () => histogramSamples(lag, queue.lags),
  );
  metric(
    "conch_interval_fsync_oldest_wait_seconds",
    "How long the oldest interval fsync still waiting to start has been due (0: none waits)",
    "gauge",
    () => [{ labels: {}, value: queue.oldestWaitMs() / 1000 }],
  );
  metric("conch_interval_fsyncs_waiting", "Interval fsyncs due and waiting to start", "gauge", () => [
    { labels: {}, value: queue.waiting },
  ]);
  metric(
    "conch_interval_bulk_syncs_total",
    "syncfs calls that served many due interval fsyncs at once",
    "counter",
    () => [{ labels: {}, value: queue.bulkSyncs }],
  );
  metric(
    "conch_interval_bulk_synced_logs_total",
    "Due interval fsyncs served by a bulk syncfs instead of an fsync of their own",
    "counter",
    () => [{ labels: {}, value: queue.bulkEntries }],
  );
}

/** The memory every log's appends and tail caches use together (append-memory.ts), one for the process. */
function registerAppendMemoryMetrics(registry: Registry): void {
  const memory = sharedAppendMemory;
  const metric = (name: string, help: string, type: MetricType, value: () => number): void =>
    registry.registerMetric(
      new ScrapedMetric(name, help, type, () => [{ labels: {}, value: value() }]).asMetric(),
    );
  metric(
    "conch_tail_cache_bytes",
    "Bytes of recently written data held in memory by every partition together",
    "gauge",
    () => memory.cachedBytes,
  );
  metric(
    "conch_tail_cache_limit_bytes",
    "The bound on conch_tail_cache_bytes",
    "gauge",
    () => memory.cacheLimit,
  );
  metric(
    "conch_tail_cache_evicted_runs_total",
    "Cached stretches of data dropped to keep every partition's tail cache within the bound together",
    "counter",
    () => memory.evictedRuns,
  );
  metric(
    "conch_append_free_chunk_bytes",
    "Bytes of append buffers kept free for reuse",
    "gauge",
    () => memory.freeBytes,
  );
}

function registerGroupMetrics(context: HttpContext, registry: Registry): void {
  // One description per group per scrape, shared by the three families of the same scrape.
  let cache: { atMs: number; rows: ReturnType<Broker["groups"]["describeGroup"]>[] } | null = null;
  const described = (): ReturnType<Broker["groups"]["describeGroup"]>[] => {
    const broker = context.broker;
    if (broker === null) return [];
    const now = Date.now();
    if (cache !== null && now - cache.atMs < 500) return cache.rows;
    const rows = broker.groups.listGroups().map((g) => broker.groups.describeGroup(g.group));
    cache = { atMs: now, rows };
    return rows;
  };
  const perPartition = (pick: "lag" | "committed") => (): Sample[] => {
    const out: Sample[] = [];
    // A lag of -1: nothing committed, or its partition not recovered yet after a crash.
    for (const g of described())
      for (const p of g.partitions)
        if (p.committed >= 0 && (pick === "committed" || p.lag >= 0))
          out.push({ labels: { group: g.group, topic: p.topic, partition: p.partition }, value: p[pick] });
    return out;
  };
  registry.registerMetric(
    new ScrapedMetric(
      "conch_group_lag",
      "High watermark minus the committed offset, per group and partition",
      "gauge",
      perPartition("lag"),
    ).asMetric(),
  );
  registry.registerMetric(
    new ScrapedMetric(
      "conch_group_committed_offset",
      "Committed offset, per group and partition",
      "gauge",
      perPartition("committed"),
    ).asMetric(),
  );
  registry.registerMetric(
    new ScrapedMetric("conch_group_members", "Members of each group", "gauge", () =>
      described().map((g) => ({ labels: { group: g.group }, value: g.members.length })),
    ).asMetric(),
  );
}

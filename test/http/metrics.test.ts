import assert from "node:assert/strict";
import { test } from "node:test";
import { batchOf } from "../broker/helpers.js";
import { startHttp } from "./helpers.js";

/** Parses the Prometheus text format into series name{labels} -> value; throws on a bad line. */
function parseMetrics(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    assert.ok(m, `a valid sample line: ${line}`);
    const value = Number(m[2]);
    assert.ok(!Number.isNaN(value) || m[2]!.toLowerCase() === "nan", `a number: ${line}`);
    series.set(m[1]!, value);
  }
  return series;
}

async function scrape(base: string): Promise<Map<string, number>> {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/plain/);
  return parseMetrics(await res.text());
}

test("GET /metrics parses, and the per-partition counters rise after producing and fetching", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("orders", 2);
  const before = await scrape(base);
  const labels = '{topic="orders",partition="1"}';
  assert.equal(before.get(`conch_partition_messages_in_total${labels}`), 0);
  assert.equal(before.get(`conch_partition_log_end_offset${labels}`), 0);

  const batch = batchOf(["a", "b", "c"]);
  await broker.produce("orders", 1, batch, "leader");
  await broker.fetch({
    topic: "orders",
    partition: 1,
    offset: 1,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    minBytes: 0,
  });
  await broker
    .fetch({ topic: "nope", partition: 0, offset: 0, maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 0 })
    .catch(() => {});

  const after = await scrape(base);
  assert.equal(after.get(`conch_partition_messages_in_total${labels}`), 3);
  assert.equal(after.get(`conch_partition_bytes_in_total${labels}`), batch.length);
  assert.equal(after.get(`conch_partition_produce_requests_total${labels}`), 1);
  assert.equal(after.get(`conch_partition_messages_out_total${labels}`), 2, "offsets 1 and 2 delivered");
  assert.equal(after.get(`conch_partition_bytes_out_total${labels}`), batch.length);
  assert.equal(after.get(`conch_partition_log_end_offset${labels}`), 3);
  assert.equal(after.get(`conch_partition_quarantined_ranges${labels}`), 0);
  assert.ok((after.get(`conch_partition_size_bytes${labels}`) ?? 0) >= batch.length);
  assert.equal(after.get('conch_partition_messages_in_total{topic="orders",partition="0"}'), 0);
  assert.equal(after.get("conch_produce_latency_seconds_count"), 1);
  assert.equal(after.get('conch_produce_latency_seconds_bucket{le="+Inf"}'), 1);
  assert.equal(after.get("conch_fetch_latency_seconds_count"), 1);
  assert.equal(after.get('conch_errors_total{code="UNKNOWN_TOPIC"}'), 1);
  assert.equal(after.get('conch_connections{listener="http"}'), 1);
  // prom-client's default metrics: event-loop lag and GC come with them.
  assert.ok(after.has("nodejs_eventloop_lag_seconds"), "event-loop lag");
  assert.ok([...after.keys()].some((k) => k.startsWith("process_cpu_user_seconds_total")));
});

test("fsync and group-commit histograms count a durable produce", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("d", 1);
  await broker.produce("d", 0, batchOf(["x"]), "durable");
  const m = await scrape(base);
  assert.ok((m.get("conch_fsync_duration_seconds_count") ?? 0) >= 1);
  assert.ok((m.get("conch_group_commit_appends_count") ?? 0) >= 1);
  assert.equal(m.get('conch_group_commit_appends_bucket{le="1"}'), m.get("conch_group_commit_appends_count"));
});

test("the tail caches' memory: what every partition holds together, and its bound", async (t) => {
  const { broker, base } = await startHttp(t);
  const before = await scrape(base);
  await broker.createTopic("tc", 1);
  await broker.produce("tc", 0, batchOf(["cached"]), "leader");
  const m = await scrape(base);
  assert.equal(m.get("conch_tail_cache_limit_bytes"), 256 * 1024 * 1024);
  assert.ok(
    (m.get("conch_tail_cache_bytes") ?? 0) > (before.get("conch_tail_cache_bytes") ?? 0),
    "the batch is cached",
  );
  assert.ok(m.has("conch_tail_cache_evicted_runs_total"));
  assert.ok(m.has("conch_append_free_chunk_bytes"));
});

test("interval fsyncs: how late each started and ended, the oldest waiting, how many wait", async (t) => {
  const { broker, base } = await startHttp(t, 50, { flush: "interval", flushIntervalMs: 10 });
  const first = await scrape(base);
  const started = first.get("conch_interval_fsync_delay_seconds_count") ?? 0;
  const ended = first.get("conch_interval_fsync_lag_seconds_count") ?? 0;
  await broker.createTopic("i", 1);
  await broker.produce("i", 0, batchOf(["x"]), "leader");
  const deadline = performance.now() + 5000;
  let m = await scrape(base);
  // Its end is counted after its start: once the end is, both are.
  while ((m.get("conch_interval_fsync_lag_seconds_count") ?? 0) <= ended && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    m = await scrape(base);
  }
  assert.ok(
    (m.get("conch_interval_fsync_lag_seconds_count") ?? 0) > ended,
    "the interval fsync's end counted",
  );
  assert.ok((m.get("conch_interval_fsync_delay_seconds_count") ?? 0) > started, "and its start");
  assert.equal(
    m.get('conch_interval_fsync_delay_seconds_bucket{le="+Inf"}'),
    m.get("conch_interval_fsync_delay_seconds_count"),
  );
  assert.ok((m.get("conch_interval_fsync_oldest_wait_seconds") ?? -1) >= 0);
  assert.ok((m.get("conch_interval_fsyncs_waiting") ?? -1) >= 0);
  // One log is never a bulk: the counters are there, at what other tests in this process left.
  assert.ok((m.get("conch_interval_bulk_syncs_total") ?? -1) >= 0);
  assert.ok((m.get("conch_interval_bulk_synced_logs_total") ?? -1) >= 0);
});

test("consumer group lag and committed offsets per partition", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("g", 1);
  await broker.produce("g", 0, batchOf(["1", "2", "3", "4"]), "leader");
  await broker.groups.commit("readers", "", 0, [{ topic: "g", partition: 0, offset: 1 }]);
  const m = await scrape(base);
  assert.equal(m.get('conch_group_lag{group="readers",topic="g",partition="0"}'), 3);
  assert.equal(m.get('conch_group_committed_offset{group="readers",topic="g",partition="0"}'), 1);
  assert.equal(m.get('conch_group_members{group="readers"}'), 0);
});

test("with metrics off (--no-metrics) appends, fetches and fsyncs are not counted", async (t) => {
  const { broker, base } = await startHttp(t, 50, { metrics: false });
  await broker.createTopic("quiet", 1);
  await broker.produce("quiet", 0, batchOf(["a", "b"]), "durable");
  await broker.fetch({
    topic: "quiet",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    minBytes: 0,
    maxWaitMs: 0,
  });
  const m = await scrape(base);
  const labels = '{topic="quiet",partition="0"}';
  assert.equal(m.get(`conch_partition_log_end_offset${labels}`), 2, "the gauges still answer");
  assert.equal(m.get(`conch_partition_messages_in_total${labels}`), 0);
  assert.equal(m.get(`conch_partition_produce_requests_total${labels}`), 0);
  assert.equal(m.get(`conch_partition_messages_out_total${labels}`), 0);
  assert.equal(m.get("conch_produce_latency_seconds_count"), 0);
  assert.equal(m.get("conch_fetch_latency_seconds_count"), 0);
  assert.equal(m.get("conch_fsync_duration_seconds_count"), 0);
  assert.equal(m.get("conch_group_commit_appends_count"), 0);
});

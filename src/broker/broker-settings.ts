/**
 * The broker's settings, one row each: its key in BrokerConfig, its command-line flag, its
 * environment variable, what it means, its default and its parser. This table is the one source of
 * truth: `loadBrokerConfig` reads it, and `conch broker` builds its options from it, so a setting is
 * added here and nowhere else.
 */
import { MAX_TIMER_MS } from "../format/duration.js";
import { DIRECT_READS, MAX_BATCH_BYTES_LIMIT, MAX_PRODUCER_IDS } from "../storage/config.js";
import type { FlushPolicy } from "./broker-config.js";
import { CLUSTER_SETTINGS } from "./cluster-settings.js";
import { booleanValue, enumValue, integerValue, textValue } from "./config-values.js";
import { SECURITY_SETTINGS } from "./security-settings.js";
import { type AnyBrokerSetting, setting } from "./setting-row.js";

export type { AnyBrokerSetting, BrokerSetting } from "./setting-row.js";

const MiB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_SEGMENT_BYTES = 1024 * MiB;

export const FLUSH_POLICIES: readonly FlushPolicy[] = ["sync", "interval", "none"];

export const BROKER_SETTINGS: readonly AnyBrokerSetting[] = [
  setting("dataDir", "path", "directory holding topics and their logs", "./data", textValue()),
  setting("host", "host", "address to listen on", "127.0.0.1", textValue()),
  setting("port", "number", "TCP port to listen on (0 picks a free one)", 7420, integerValue(0, 65535)),
  setting(
    "flush",
    "policy",
    "when appends are fsynced: sync (before acknowledging), interval, or none (left to the OS)",
    "interval",
    enumValue(FLUSH_POLICIES),
  ),
  setting(
    "flushIntervalMs",
    "ms",
    "with flush=interval, how often logs are fsynced",
    1000,
    integerValue(1, MAX_TIMER_MS),
  ),
  setting(
    "segmentBytes",
    "bytes",
    "size at which a partition rolls to a new segment file",
    128 * MiB,
    integerValue(1024, MAX_SEGMENT_BYTES),
  ),
  setting(
    "segmentMs",
    "ms",
    "age at which a partition rolls to a new segment file",
    7 * DAY_MS,
    integerValue(1, Number.MAX_SAFE_INTEGER),
  ),
  setting(
    "indexIntervalBytes",
    "bytes",
    "bytes of log between two offset index entries",
    4096,
    integerValue(1, MAX_SEGMENT_BYTES),
  ),
  setting(
    "retentionMs",
    "ms",
    "delete closed segments older than this; -1 keeps them forever",
    7 * DAY_MS,
    integerValue(1, Number.MAX_SAFE_INTEGER, true),
  ),
  setting(
    "retentionBytes",
    "bytes",
    "keep each partition under this many bytes; -1 for no limit",
    -1,
    integerValue(0, Number.MAX_SAFE_INTEGER, true),
  ),
  setting(
    "maxBatchBytes",
    "bytes",
    "largest batch a producer may send",
    4 * MiB,
    // The storage layer's own limit, so a value the broker accepts is one its logs accept.
    integerValue(1024, MAX_BATCH_BYTES_LIMIT),
  ),
  setting(
    "maxConnections",
    "number",
    "client connections accepted at once",
    1000,
    integerValue(1, 1_000_000),
  ),
  setting(
    "maxConnectionsPerIp",
    "number",
    "client connections accepted at once from one IP address",
    1000,
    integerValue(1, 1_000_000),
  ),
  setting(
    "maxQueuedResponseBytes",
    "bytes",
    "bytes of responses queued for all connections together; over it, fetches wait for them to drain",
    256 * MiB,
    // At least the server's largest fetch answer (16 MiB), or every fetch would wait or be cut.
    integerValue(16 * MiB, Number.MAX_SAFE_INTEGER),
  ),
  setting(
    "tailCacheBytes",
    "bytes",
    "bytes of recently written data kept in memory for all partitions together, so that consumers near the end read no file; past it the oldest goes first. Also bounds, separately, the produce requests whose records are deferred behind the shared log (0: none deferred)",
    256 * MiB,
    integerValue(0, Number.MAX_SAFE_INTEGER),
  ),
  setting(
    "idleTimeoutMs",
    "ms",
    "a connection that sends no request for this long, with nothing in flight, is closed",
    10 * 60 * 1000,
    integerValue(1, MAX_TIMER_MS),
  ),
  setting(
    "frameTimeoutMs",
    "ms",
    "a connection that starts a request frame and does not finish sending it within this long is closed",
    30_000,
    integerValue(1, MAX_TIMER_MS),
  ),
  setting(
    "autoCreateTopics",
    null,
    "create a topic on its first produce or fetch instead of failing with UNKNOWN_TOPIC",
    false,
    booleanValue(),
  ),
  setting(
    "defaultPartitions",
    "number",
    "partitions of an automatically created topic",
    1,
    integerValue(1, 10_000),
  ),
  setting(
    "maxPartitions",
    "number",
    "partitions across all topics (internal ones included); creating or growing past it fails with INVALID_PARTITIONS",
    10_000,
    integerValue(1, 1_000_000),
  ),
  setting(
    "compactionDelayMs",
    "ms",
    "a closed segment of a compacted topic is compacted within this long",
    30_000,
    integerValue(1, MAX_TIMER_MS),
  ),
  setting(
    "compactionBytesPerSec",
    "bytes",
    "cap on each partition log's compaction reads plus writes per second; -1 for no cap",
    -1,
    integerValue(1, Number.MAX_SAFE_INTEGER, true),
  ),
  setting(
    "producerIdExpirationMs",
    "ms",
    "an idempotent producer that has not produced to a partition for this long is forgotten there",
    DAY_MS,
    integerValue(1, Number.MAX_SAFE_INTEGER),
  ),
  setting(
    "maxProducerIds",
    "number",
    "idempotent producers each partition remembers at most; past it the longest idle is forgotten",
    1000,
    integerValue(1, MAX_PRODUCER_IDS),
  ),
  {
    ...setting(
      "http",
      null,
      "serve metrics, health checks and the admin API over HTTP (docs/http-api.md); --no-http turns it off",
      true,
      booleanValue(),
    ),
    negation: "--no-http",
  },
  setting("httpHost", "host", "address the HTTP port listens on", "127.0.0.1", textValue()),
  setting(
    "httpPort",
    "number",
    "HTTP port for metrics, health and admin (0 picks a free one)",
    7421,
    integerValue(0, 65535),
  ),
  setting(
    "directReads",
    "mode",
    "read old segment files with direct I/O (O_DIRECT), past the page cache: auto (once a read finds a segment not cached), on (every closed segment), or off",
    "auto",
    enumValue(DIRECT_READS),
  ),
  {
    ...setting(
      "metrics",
      null,
      "count appends, fetches and fsyncs for /metrics and the console; --no-metrics turns counting off",
      true,
      booleanValue(),
    ),
    negation: "--no-metrics",
  },
  {
    ...setting(
      "kafka",
      null,
      "serve the Kafka wire protocol on --kafka-port (docs/kafka.md); --no-kafka turns it off",
      true,
      booleanValue(),
    ),
    negation: "--no-kafka",
  },
  setting(
    "kafkaPort",
    "number",
    "TCP port of the Kafka listener, on --host (0 picks a free one)",
    9092,
    integerValue(0, 65535),
  ),
  setting(
    "kafkaAdvertisedHost",
    "host",
    "the host Kafka clients are told to connect to (Metadata); empty means --host",
    "",
    textValue(true),
  ),
  ...SECURITY_SETTINGS,
  ...CLUSTER_SETTINGS,
];

/** The flag and environment variable that name a JSON config file. */
export const CONFIG_FILE_FLAG = "--config";
export const CONFIG_FILE_OPTION = "--config <path>";
export const CONFIG_FILE_ENV = "CONCH_CONFIG";

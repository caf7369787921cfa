/**
 * Per-topic config overrides (the keys of CreateTopic in docs/protocol.md). A topic stores only the
 * keys it overrides, as canonical strings, so a later change of a broker default still reaches every
 * topic that did not pin its own value. The effective config is the overrides over the broker's
 * settings; it is what DescribeTopic shows and what each partition log runs with.
 */
import { MAX_TIMER_MS } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { CORRUPT_DATA_POLICIES, type CorruptDataPolicy } from "../storage/config.js";
import type { BrokerConfig, FlushPolicy } from "./broker-config.js";
import { FLUSH_POLICIES } from "./broker-settings.js";
import { enumValue, integerValue, type ValueParser } from "./config-values.js";

/** Passed to every partition log, whose cleaner honours it (docs/compaction.md). */
export type CleanupPolicy = "delete" | "compact" | "compact,delete";

export interface TopicConfig {
  cleanupPolicy: CleanupPolicy;
  retentionMs: number;
  retentionBytes: number;
  segmentBytes: number;
  flush: FlushPolicy;
  flushIntervalMs: number;
  deleteRetentionMs: number;
  minCompactionLagMs: number;
  /** How a read of a quarantined (damaged) range is answered (docs/design.md, recovery). */
  corruptData: CorruptDataPolicy;
  /** In cluster mode, the in-sync replicas an acks=all produce needs (docs/cluster.md); 1 alone. */
  minInsyncReplicas: number;
}

/** Overrides as stored in topic.json: config key to canonical value. */
export type TopicOverrides = Record<string, string>;

interface TopicConfigSpec<F extends keyof TopicConfig> {
  readonly key: string;
  readonly field: F;
  readonly parse: ValueParser<TopicConfig[F]>;
  readonly fallback: (broker: BrokerConfig) => TopicConfig[F];
}
type AnySpec = { [F in keyof TopicConfig]: TopicConfigSpec<F> }[keyof TopicConfig];

const DAY_MS = 24 * 60 * 60 * 1000;

function spec<F extends keyof TopicConfig>(
  key: string,
  field: F,
  parse: ValueParser<TopicConfig[F]>,
  fallback: (broker: BrokerConfig) => TopicConfig[F],
): TopicConfigSpec<F> {
  return { key, field, parse, fallback };
}

const parsePolicyList = enumValue<CleanupPolicy>(["delete", "compact", "compact,delete"]);
/** "delete,compact" and stray spaces mean the same as "compact,delete". */
function parseCleanupPolicy(raw: unknown): CleanupPolicy {
  if (typeof raw === "string") {
    const parts = [...new Set(raw.split(",").map((p) => p.trim()))].sort();
    return parsePolicyList(parts.join(","));
  }
  return parsePolicyList(raw);
}

const SPECS: readonly AnySpec[] = [
  spec("cleanup.policy", "cleanupPolicy", parseCleanupPolicy, () => "delete"),
  spec("retention.ms", "retentionMs", integerValue(1, Number.MAX_SAFE_INTEGER, true), (b) => b.retentionMs),
  spec(
    "retention.bytes",
    "retentionBytes",
    integerValue(0, Number.MAX_SAFE_INTEGER, true),
    (b) => b.retentionBytes,
  ),
  spec("segment.bytes", "segmentBytes", integerValue(1024, 1024 * 1024 * 1024), (b) => b.segmentBytes),
  spec("flush", "flush", enumValue(FLUSH_POLICIES), (b) => b.flush),
  spec("flush.interval.ms", "flushIntervalMs", integerValue(1, MAX_TIMER_MS), (b) => b.flushIntervalMs),
  spec("delete.retention.ms", "deleteRetentionMs", integerValue(0, Number.MAX_SAFE_INTEGER), () => DAY_MS),
  spec("min.compaction.lag.ms", "minCompactionLagMs", integerValue(0, Number.MAX_SAFE_INTEGER), () => 0),
  spec("corrupt.data", "corruptData", enumValue(CORRUPT_DATA_POLICIES), () => "fail"),
  spec("min.insync.replicas", "minInsyncReplicas", integerValue(1, 1000), () => 1),
];

const specByKey = new Map<string, AnySpec>(SPECS.map((s) => [s.key, s]));

/** Every topic config key, in a stable order. */
export const TOPIC_CONFIG_KEYS: readonly string[] = SPECS.map((s) => s.key);

/**
 * Validates overrides and returns them in canonical form. With `allowRemoval`, an empty value means
 * "drop this override" (AlterTopic) and is kept as "" for `mergeOverrides`.
 */
export function parseTopicConfigs(configs: Record<string, string>, allowRemoval = false): TopicOverrides {
  const out: TopicOverrides = {};
  for (const [key, raw] of Object.entries(configs)) {
    const s = specByKey.get(key);
    if (s === undefined) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `unknown topic config "${key}" (known: ${TOPIC_CONFIG_KEYS.join(", ")})`,
      );
    }
    if (allowRemoval && raw === "") {
      out[key] = "";
      continue;
    }
    try {
      out[key] = String(s.parse(raw));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ConchError(ErrorCode.INVALID_CONFIG, `invalid topic config ${key}: ${why}`);
    }
  }
  return out;
}

/** Applies validated changes to stored overrides; "" removes a key. Returns a new object. */
export function mergeOverrides(current: TopicOverrides, changes: TopicOverrides): TopicOverrides {
  const merged: TopicOverrides = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === "") delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The overrides over the broker's settings. `overrides` must already be canonical. */
export function effectiveTopicConfig(overrides: TopicOverrides, broker: BrokerConfig): TopicConfig {
  const out: Record<string, unknown> = {};
  for (const s of SPECS) {
    const raw = overrides[s.key];
    out[s.field] = raw === undefined ? s.fallback(broker) : s.parse(raw);
  }
  return out as unknown as TopicConfig;
}

/** The effective config as key/value strings, every key present (DescribeTopic). */
export function describeTopicConfig(config: TopicConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of SPECS) out[s.key] = String(config[s.field]);
  return out;
}

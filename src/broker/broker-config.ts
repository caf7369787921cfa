/**
 * Broker configuration and where it comes from. Each setting is taken from the first source that
 * has it: command-line flags, then CONCH_* environment variables, then a JSON config file (named by
 * --config or CONCH_CONFIG), then the default. Every value is validated, and a bad one fails with
 * ConchError(INVALID_CONFIG) naming the setting and where the value came from, so a typo in a
 * deployment fails at start instead of running with a surprise.
 */
import { readFileSync } from "node:fs";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { DirectReads, FlushPolicy } from "../storage/config.js";
import {
  type AnyBrokerSetting,
  BROKER_SETTINGS,
  CONFIG_FILE_ENV,
  CONFIG_FILE_FLAG,
} from "./broker-settings.js";

export type { FlushPolicy };

export interface BrokerConfig {
  dataDir: string;
  host: string;
  port: number;
  flush: FlushPolicy;
  flushIntervalMs: number;
  segmentBytes: number;
  segmentMs: number;
  indexIntervalBytes: number;
  retentionMs: number;
  retentionBytes: number;
  maxBatchBytes: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  maxQueuedResponseBytes: number;
  /** Bytes every partition's tail cache holds together (storage/append-memory.ts). */
  tailCacheBytes: number;
  idleTimeoutMs: number;
  frameTimeoutMs: number;
  autoCreateTopics: boolean;
  defaultPartitions: number;
  maxPartitions: number;
  compactionDelayMs: number;
  compactionBytesPerSec: number;
  /** An idle idempotent producer is forgotten by a partition after this long. */
  producerIdExpirationMs: number;
  /** Idempotent producers each partition remembers at most. */
  maxProducerIds: number;
  /** Serve the HTTP port (metrics, health, admin API: docs/http-api.md). */
  http: boolean;
  httpHost: string;
  httpPort: number;
  /** Count traffic for /metrics and the event feed (docs/performance/features.md, metrics cost). */
  metrics: boolean;
  /** Reads of old segments with direct I/O: once found cold ("auto"), always ("on") or never ("off"). */
  directReads: DirectReads;
  /** Serve the Kafka wire protocol (docs/kafka.md) on kafkaPort, at the same host. */
  kafka: boolean;
  kafkaPort: number;
  /** What Metadata tells Kafka clients to connect to; "" means the listen host. */
  kafkaAdvertisedHost: string;
  /** Security (security-settings.ts, docs/security.md). */
  tlsPort: number;
  tlsHost: string | null;
  /** The Kafka protocol over TLS on this port (docs/kafka.md, "TLS"); null: not served. */
  kafkaTlsPort: number | null;
  tlsCert: string | null;
  tlsKey: string | null;
  tlsCa: string | null;
  tlsClientAuth: "none" | "requested" | "required";
  authentication: "none" | "required";
  saslPlainWithoutTls: boolean;
  authorization: "off" | "on";
  superUsers: readonly string[];
  /** Host names the HTTP port answers to besides its addresses; "*" for any (src/http/host-check.ts). */
  httpHostNames: readonly string[];
  /** With authentication required, whether /metrics needs a login. */
  httpMetrics: "login" | "open";
  /** Cluster mode (cluster-settings.ts, docs/cluster.md): -1 and "" for a single-node broker. */
  brokerId: number;
  etcd: string;
  clusterId: string;
  leaseTtlSeconds: number;
  replicaLagTimeMaxMs: number;
  advertisedPort: number;
  defaultReplicationFactor: number;
}

/** Room for a request's fields around its batches: a frame may be this much larger than a batch. */
export const FRAME_OVERHEAD_BYTES = 64 * 1024;

/** The largest request frame the broker accepts (docs/protocol.md). */
export function maxFrameBytes(config: BrokerConfig): number {
  return config.maxBatchBytes + FRAME_OVERHEAD_BYTES;
}

export interface BrokerConfigSources {
  /**
   * Parsed command-line options keyed like BrokerConfig (commander's camelCase of the flag names),
   * plus `config` for the config file. Keys that are not settings are ignored (the CLI has its
   * own), and so are undefined values: flags must not carry defaults, or they would hide the
   * environment and the file.
   */
  flags?: Record<string, unknown>;
  /** Environment variables; default `process.env`. Empty values count as unset. */
  env?: Record<string, string | undefined>;
  /** A config file to read when neither --config nor CONCH_CONFIG names one. */
  configFile?: string;
  /**
   * Keys a config file may hold besides the settings: options the caller reads itself (the CLI's
   * `logLevel` and `logFormat`, see configFileValues). Any other unknown key is refused.
   */
  callerKeys?: readonly string[];
}

const byKey = new Map<string, AnyBrokerSetting>(BROKER_SETTINGS.map((s) => [s.key, s]));

/** Builds the configuration from flags, environment, config file and defaults, in that order. */
export function loadBrokerConfig(sources: BrokerConfigSources = {}): BrokerConfig {
  const flags = sources.flags ?? {};
  const env = sources.env ?? process.env;
  const result: Record<string, unknown> = {};
  const file = readConfigFile(configFilePath(flags, env, sources.configFile), sources.callerKeys ?? []);
  for (const s of BROKER_SETTINGS) {
    const flagValue = flags[s.key];
    const envValue = env[s.env];
    if (flagValue !== undefined) result[s.key] = parseSetting(s, flagValue, s.flag);
    else if (envValue !== undefined && envValue !== "") result[s.key] = parseSetting(s, envValue, s.env);
    else if (file !== null && file.values[s.key] !== undefined) {
      result[s.key] = parseSetting(s, file.values[s.key], `config file ${file.path}`);
    } else result[s.key] = s.defaultValue;
  }
  return result as unknown as BrokerConfig;
}

/**
 * Validates a configuration given in code (embedded mode, tests) and fills what it leaves out with
 * the defaults. Unknown keys are refused, as in a config file.
 */
export function resolveBrokerConfig(partial: Partial<BrokerConfig> = {}): BrokerConfig {
  const given = partial as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!byKey.has(key) && given[key] !== undefined) {
      throw new ConchError(ErrorCode.INVALID_CONFIG, `unknown broker setting "${key}"`);
    }
  }
  const result: Record<string, unknown> = {};
  for (const s of BROKER_SETTINGS) {
    const value = given[s.key];
    result[s.key] = value === undefined ? s.defaultValue : parseSetting(s, value, "broker config");
  }
  return result as unknown as BrokerConfig;
}

function parseSetting(s: AnyBrokerSetting, raw: unknown, source: string): unknown {
  try {
    return s.parse(raw);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ConchError(ErrorCode.INVALID_CONFIG, `invalid setting ${s.key} (from ${source}): ${why}`);
  }
}

function configFilePath(
  flags: Record<string, unknown>,
  env: Record<string, string | undefined>,
  fallback: string | undefined,
): string | null {
  const flag = flags.config;
  if (flag !== undefined) {
    if (typeof flag !== "string" || flag === "") {
      throw new ConchError(ErrorCode.INVALID_CONFIG, `${CONFIG_FILE_FLAG} needs a file path`);
    }
    return flag;
  }
  const fromEnv = env[CONFIG_FILE_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return fallback ?? null;
}

/**
 * The config file's values as written (with its path), or null when no file is named; for a
 * caller's own keys (see callerKeys). Only loadBrokerConfig validates the settings in it.
 */
export function configFileValues(
  sources: BrokerConfigSources = {},
): { path: string; values: Record<string, unknown> } | null {
  const path = configFilePath(sources.flags ?? {}, sources.env ?? process.env, sources.configFile);
  return readConfigFile(path, sources.callerKeys ?? []);
}

function readConfigFile(
  path: string | null,
  callerKeys: readonly string[],
): { path: string; values: Record<string, unknown> } | null {
  if (path === null) return null;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(err);
    throw new ConchError(ErrorCode.INVALID_CONFIG, `cannot read config file ${path}: ${why}`, { cause: err });
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ConchError(ErrorCode.INVALID_CONFIG, `config file ${path} is not valid JSON: ${why}`);
  }
  if (values === null || typeof values !== "object" || Array.isArray(values)) {
    throw new ConchError(ErrorCode.INVALID_CONFIG, `config file ${path} must hold a JSON object of settings`);
  }
  const record = values as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!byKey.has(key) && !callerKeys.includes(key)) {
      const known = [...BROKER_SETTINGS.map((s) => s.key), ...callerKeys].join(", ");
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `config file ${path}: unknown setting "${key}" (known: ${known})`,
      );
    }
  }
  return { path, values: record };
}

/**
 * The `configs array<(key string, value string)>` field shared by CreateTopic, AlterTopic and
 * DescribeTopic. Decoded configs are objects with no prototype, so a key such as `__proto__` is
 * only a key; a key given twice is malformed.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { WireReader } from "./wire-reader.js";
import { stringSize, type WireWriter } from "./wire-writer.js";

export type TopicConfigs = Record<string, string>;

/** Smallest wire size of one entry: two empty strings. */
const MIN_ENTRY_BYTES = 4;

export function configsSize(configs: TopicConfigs): number {
  let size = 4;
  for (const key of Object.keys(configs)) size += stringSize(key) + stringSize(configs[key]!);
  return size;
}

export function writeConfigs(w: WireWriter, configs: TopicConfigs): void {
  const keys = Object.keys(configs);
  w.count(keys.length);
  for (const key of keys) w.string(key).string(configs[key]!);
}

export function readConfigs(r: WireReader): TopicConfigs {
  const n = r.count(MIN_ENTRY_BYTES);
  const configs: TopicConfigs = Object.create(null);
  for (let i = 0; i < n; i++) {
    const key = r.string();
    const value = r.string();
    if (key in configs)
      throw new ConchError(ErrorCode.MALFORMED_REQUEST, `malformed configs: key "${key}" given twice`);
    configs[key] = value;
  }
  return configs;
}

/** One row of the broker's settings table (broker-settings.ts) and the helper that makes one. */
import type { BrokerConfig } from "./broker-config.js";
import type { ValueParser } from "./config-values.js";

export interface BrokerSetting<K extends keyof BrokerConfig = keyof BrokerConfig> {
  readonly key: K;
  /** The long flag, e.g. "--data-dir"; commander names the parsed option `key`. */
  readonly flag: string;
  /** Commander's option syntax: "--data-dir <path>"; a boolean setting takes no value. */
  readonly option: string;
  /** The environment variable, e.g. "CONCH_DATA_DIR". */
  readonly env: string;
  readonly description: string;
  readonly defaultValue: BrokerConfig[K];
  readonly parse: ValueParser<BrokerConfig[K]>;
  /** For a boolean setting that is on by default: the flag that turns it off, e.g. "--no-http". */
  readonly negation?: string;
}

export type AnyBrokerSetting = { [K in keyof BrokerConfig]: BrokerSetting<K> }[keyof BrokerConfig];

export function setting<K extends keyof BrokerConfig>(
  key: K,
  valueName: string | null,
  description: string,
  defaultValue: BrokerConfig[K],
  parse: ValueParser<BrokerConfig[K]>,
): BrokerSetting<K> {
  const words = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const flag = `--${words}`;
  return {
    key,
    flag,
    option: valueName === null ? flag : `${flag} <${valueName}>`,
    env: `CONCH_${words.replace(/-/g, "_").toUpperCase()}`,
    description,
    defaultValue,
    parse,
  };
}

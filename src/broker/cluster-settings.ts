/**
 * The broker's cluster-mode settings (docs/cluster.md). A broker is single-node unless it is given
 * both a broker id and etcd endpoints; then it joins the cluster those name.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { integerValue, textValue, type ValueParser } from "./config-values.js";
import { type AnyBrokerSetting, setting } from "./setting-row.js";

/** `host:port,host:port`: etcd client endpoints; empty for single-node mode. */
export function endpointListValue(): ValueParser<string> {
  const expected = "a comma-separated list of host:port";
  return (raw) => {
    if (typeof raw !== "string") throw new Error(`expected ${expected}, got ${String(raw)}`);
    const parts = raw.split(",").map((s) => s.trim());
    if (raw.trim() === "") return "";
    for (const p of parts) {
      const m = /^([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$/.exec(p);
      if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) {
        throw new Error(`expected ${expected}, got ${JSON.stringify(p)}`);
      }
    }
    return parts.join(",");
  };
}

export const CLUSTER_SETTINGS: readonly AnyBrokerSetting[] = [
  setting(
    "brokerId",
    "n",
    "cluster mode: this broker's id, unique in the cluster (with --etcd); -1 for a single-node broker",
    -1,
    integerValue(0, 2 ** 31 - 2, true),
  ),
  setting(
    "etcd",
    "endpoints",
    "cluster mode: etcd client endpoints, host:port,... (with --broker-id); empty for a single-node broker",
    "",
    endpointListValue(),
  ),
  setting(
    "clusterId",
    "name",
    "cluster mode: the cluster's name, the etcd key prefix /conch/<name>/",
    "conch",
    (raw) => {
      const v = textValue()(raw);
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(v))
        throw new Error(`expected 1 to 64 of [A-Za-z0-9._-], got ${JSON.stringify(v)}`);
      return v;
    },
  ),
  setting(
    "leaseTtlSeconds",
    "s",
    "cluster mode: the broker's etcd lease; a broker silent this long loses its leaderships",
    2,
    integerValue(2, 60),
  ),
  setting(
    "replicaLagTimeMaxMs",
    "ms",
    "cluster mode: a follower not caught up with its leader this long leaves the in-sync replicas (replica.lag.time.max.ms)",
    10_000,
    integerValue(100, 600_000),
  ),
  setting(
    "advertisedPort",
    "port",
    "cluster mode: the native port other brokers and clients are told to reach this broker on (a proxy or port forward in front of the listener); 0: the listener's own",
    0,
    integerValue(0, 65535),
  ),
  setting(
    "defaultReplicationFactor",
    "n",
    "cluster mode: replicas of a topic created without a replication factor (at most the live brokers)",
    3,
    integerValue(1, 1000),
  ),
];

/** Cluster mode needs both a broker id and etcd endpoints; one without the other is a mistake. */
export function checkClusterSettings(config: { brokerId: number; etcd: string }): void {
  if ((config.brokerId === -1) !== (config.etcd === "")) {
    throw new ConchError(
      ErrorCode.INVALID_CONFIG,
      "cluster mode needs both --broker-id and --etcd (a single-node broker takes neither)",
    );
  }
}

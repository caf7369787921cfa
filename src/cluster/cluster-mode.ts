/**
 * Starts a broker's cluster membership (`conch broker --broker-id N --etcd host:port,...`): opens
 * the etcd store (loading the etcd3 client only now), registers and watches through a ClusterNode,
 * and makes the Broker create topics through the cluster and answer Metadata from it. The broker
 * runner loads this file with import() in cluster mode only.
 */
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import { ClusterNode } from "./cluster-node.js";
import { openEtcdStore } from "./etcd/etcd3-store.js";
import { ClusterTopics } from "./metadata-topics.js";
import { MetadataView } from "./metadata-view.js";
import type { PartitionRole, ReplicaControl } from "./roles.js";

export interface ClusterModeOptions {
  readonly broker: Broker;
  readonly logger: Logger;
  /** The native listener as other brokers and clients reach it. */
  readonly host: string;
  readonly port: number;
  /** The Kafka listener as Kafka clients reach it; port 0 when it is off. */
  readonly kafkaHost: string;
  readonly kafkaPort: number;
  /** The replica side; by default one that only logs the roles it is given. */
  readonly replicas?: ReplicaControl;
}

export interface ClusterMode {
  readonly node: ClusterNode;
  close(): Promise<void>;
}

export async function startClusterMode(o: ClusterModeOptions): Promise<ClusterMode> {
  const config = o.broker.config;
  const logger = o.logger.child({ cluster: config.clusterId, brokerId: config.brokerId });
  const store = await openEtcdStore(config.etcd.split(","));
  const node = new ClusterNode({
    clusterId: config.clusterId,
    self: { id: config.brokerId, host: o.host, port: o.port, kafkaHost: o.kafkaHost, kafkaPort: o.kafkaPort },
    store,
    replicas: o.replicas ?? new LoggedRoles(logger),
    leaseTtlSeconds: config.leaseTtlSeconds,
    log: { info: (msg) => logger.info(msg), warn: (msg) => logger.warn(msg) },
  });
  try {
    await node.start();
  } catch (err) {
    store.close();
    throw err;
  }
  o.broker.topicAdmin = new ClusterTopics(node, {
    defaultReplicationFactor: config.defaultReplicationFactor,
    readyTimeoutMs: 10_000,
  });
  o.broker.cluster = new MetadataView(config.brokerId, node.cache);
  logger.info(`joined cluster ${config.clusterId} as broker ${config.brokerId} (etcd ${config.etcd})`);
  return {
    node,
    async close() {
      await node.close();
      store.close();
    },
  };
}

/** Roles told to nobody but the log: the metadata side on its own, before replicas are managed. */
class LoggedRoles implements ReplicaControl {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  async applyRole(role: PartitionRole): Promise<void> {
    this.#logger.debug({ role }, "partition role");
  }

  async dropPartition(topic: string, partition: number): Promise<void> {
    this.#logger.debug({ topic, partition }, "partition dropped");
  }

  fence(): void {}

  async close(): Promise<void> {}
}

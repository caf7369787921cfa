/**
 * Starts a broker's cluster membership (`conch broker --broker-id N --etcd host:port,...`): opens
 * the etcd store (loading the etcd3 client only now), registers and watches through a ClusterNode,
 * makes the Broker create topics through the cluster and answer Metadata from it, and runs the
 * replica side (ReplicaManager) on the roles the node hands out. The broker runner loads this file
 * with import() in cluster mode only.
 */
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import { ClusterNode } from "./cluster-node.js";
import { openEtcdStore } from "./etcd/etcd3-store.js";
import { HostedReplicas } from "./hosted-replicas.js";
import { ClusterTopics, MIN_INSYNC_REPLICAS_CONFIG } from "./metadata-topics.js";
import { MetadataView } from "./metadata-view.js";
import { OffsetsPlacement } from "./offsets-placement.js";
import { PeerRequests } from "./peer-requests.js";
import { ReplicaManager } from "./replica-manager.js";
import type { ReplicaControl } from "./roles.js";

/** How long a stopping broker waits for the controller to move its leaderships before it goes anyway. */
export const CONTROLLED_SHUTDOWN_TIMEOUT_MS = 10_000;

export interface ClusterModeOptions {
  readonly broker: Broker;
  readonly logger: Logger;
  /** The native listener as other brokers and clients reach it. */
  readonly host: string;
  readonly port: number;
  /** The Kafka listener as Kafka clients reach it; port 0 when it is off. */
  readonly kafkaHost: string;
  readonly kafkaPort: number;
  /** The replica side instead of a ReplicaManager (tests of the metadata side alone). */
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
  const replicas = o.replicas ?? new HostedReplicas(o.broker);
  const hosted = replicas instanceof HostedReplicas ? replicas : null;
  const node = new ClusterNode({
    clusterId: config.clusterId,
    self: { id: config.brokerId, host: o.host, port: o.port, kafkaHost: o.kafkaHost, kafkaPort: o.kafkaPort },
    store,
    replicas,
    leaseTtlSeconds: config.leaseTtlSeconds,
    log: { info: (msg) => logger.info(msg), warn: (msg) => logger.warn(msg) },
  });
  const topics = new ClusterTopics(node, {
    defaultReplicationFactor: config.defaultReplicationFactor,
    readyTimeoutMs: 10_000,
  });
  // Before the first role: groups are coordinated where their offsets partition is led.
  o.broker.groups.coordinateLedPartitions(new OffsetsPlacement(node.cache, topics));
  if (hosted !== null) {
    hosted.attach(
      new ReplicaManager({
        broker: o.broker,
        view: node,
        logger,
        lagTimeMaxMs: config.replicaLagTimeMaxMs,
        minInsyncReplicas: (topic) => minInsyncReplicas(node, topic),
      }),
      node.cache,
    );
  }
  try {
    await node.start();
  } catch (err) {
    await hosted?.close();
    store.close();
    throw err;
  }
  o.broker.topicAdmin = topics;
  const peers = new PeerRequests(config.brokerId, (id) => node.endpoint(id));
  o.broker.cluster = new MetadataView(config.brokerId, node.cache, peers);
  logger.info(`joined cluster ${config.clusterId} as broker ${config.brokerId} (etcd ${config.etcd})`);
  return {
    node,
    async close() {
      // Controlled shutdown first: leaderships move while this broker still answers NOT_LEADER.
      const done = await node.shutDown(CONTROLLED_SHUTDOWN_TIMEOUT_MS).catch((err: unknown) => {
        logger.warn({ err }, "controlled shutdown failed");
        return false;
      });
      if (!done) logger.warn("controlled shutdown: leaderships not all moved in time; leaving anyway");
      else logger.info("controlled shutdown: leaderships moved");
      peers.close();
      await node.close();
      // Before the broker closes (the runner closes it after this), so no fetcher writes to a closed log.
      await hosted?.close();
      store.close();
    },
  };
}

/** The topic's min.insync.replicas as the cluster's topic record has it (validated at creation). */
function minInsyncReplicas(node: ClusterNode, topic: string): number {
  const raw = node.cache.topics.get(topic)?.value.configs[MIN_INSYNC_REPLICAS_CONFIG];
  return raw === undefined ? 1 : Number(raw);
}

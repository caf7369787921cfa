/**
 * The cluster's metadata as Metadata requests read it (the Broker's ClusterMetadata), over the
 * broker's cached view: live brokers sorted by id, topics that have their partition records.
 */
import type {
  ClusterBroker,
  ClusterMetadata,
  ClusterPartition,
  PartitionFigures,
} from "../broker/cluster-metadata.js";
import type { GroupListing } from "../broker/group-description.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { PeerRequests } from "./peer-requests.js";

export class MetadataView implements ClusterMetadata {
  readonly brokerId: number;
  readonly #cache: MetadataCache;
  readonly #peers: PeerRequests;

  constructor(brokerId: number, cache: MetadataCache, peers: PeerRequests) {
    this.brokerId = brokerId;
    this.#cache = cache;
    this.#peers = peers;
  }

  controllerId(): number {
    return this.#cache.controller?.brokerId ?? -1;
  }

  brokers(): readonly ClusterBroker[] {
    return [...this.#cache.brokers.values()].sort((a, b) => a.id - b.id);
  }

  topicNames(): readonly string[] {
    return [...this.#cache.topics.keys()].sort();
  }

  partitions(topic: string): readonly ClusterPartition[] | undefined {
    const t = this.#cache.topics.get(topic)?.value;
    const records = this.#cache.partitions.get(topic);
    if (t === undefined || records === undefined) return undefined;
    const out: ClusterPartition[] = [];
    for (let p = 0; p < t.partitions; p++) {
      const r = records.get(p)?.value;
      // Not yet written by the controller: offline until it is.
      out.push(r ?? { partition: p, leaderId: -1, leaderEpoch: 0, replicas: t.assignment[p] ?? [], isr: [] });
    }
    return out;
  }

  topicConfigs(topic: string): Readonly<Record<string, string>> | undefined {
    return this.#cache.topics.get(topic)?.value.configs;
  }

  askLeader(leaderId: number, topic: string, timeoutMs: number): Promise<readonly PartitionFigures[]> {
    return this.#peers.figures(leaderId, topic, timeoutMs);
  }

  askGroups(brokerId: number, timeoutMs: number): Promise<readonly GroupListing[]> {
    return this.#peers.groups(brokerId, timeoutMs);
  }
}

/**
 * The cluster's metadata as Metadata requests read it (the Broker's ClusterMetadata), over the
 * broker's cached view: live brokers sorted by id, topics that have their partition records.
 */
import type { ClusterBroker, ClusterMetadata, ClusterPartition } from "../broker/cluster-metadata.js";
import type { MetadataCache } from "./metadata-cache.js";

export class MetadataView implements ClusterMetadata {
  readonly brokerId: number;
  readonly #cache: MetadataCache;

  constructor(brokerId: number, cache: MetadataCache) {
    this.brokerId = brokerId;
    this.#cache = cache;
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
}

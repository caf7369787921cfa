/**
 * Where a group's coordinator is in cluster mode (the Broker's GroupPlacement): the leader of the
 * group's partition of `__consumer_offsets`, by Kafka's hash (broker/group-partition.ts). The
 * first FindCoordinator of the cluster makes the topic through the cluster like any topic: 16
 * partitions, compacted, replicated on min(3, live brokers), min.insync.replicas 2 when there are
 * replicas to spare, so a commit acknowledged by the ISR survives its coordinator's death.
 */
import type { ClusterBroker } from "../broker/cluster-metadata.js";
import { groupPartition } from "../broker/group-partition.js";
import type { GroupPlacement } from "../broker/group-placement.js";
import { OFFSETS_TOPIC, OFFSETS_TOPIC_CONFIGS } from "../broker/offset-store.js";
import type { TopicAdmin } from "../broker/topic-admin.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { MetadataCache } from "./metadata-cache.js";
import { MIN_INSYNC_REPLICAS_CONFIG } from "./metadata-topics.js";

/** Kafka's offsets.topic.num.partitions default is 50; 16 suits the few brokers Conch runs as. */
export const OFFSETS_TOPIC_PARTITIONS = 16;
const OFFSETS_TOPIC_MAX_REPLICAS = 3;

export class OffsetsPlacement implements GroupPlacement {
  readonly #cache: MetadataCache;
  readonly #topics: TopicAdmin;
  readonly #partitions: number;
  #creating: Promise<void> | null = null;

  constructor(cache: MetadataCache, topics: TopicAdmin, partitions = OFFSETS_TOPIC_PARTITIONS) {
    this.#cache = cache;
    this.#topics = topics;
    this.#partitions = partitions;
  }

  async coordinator(group: string): Promise<ClusterBroker> {
    if (!this.#ready()) {
      this.#creating ??= this.#create().finally(() => {
        this.#creating = null;
      });
      await this.#creating;
    }
    const topic = this.#cache.topics.get(OFFSETS_TOPIC)!.value;
    const partition = groupPartition(group, topic.partitions);
    const leaderId = this.#cache.partition(OFFSETS_TOPIC, partition)?.value.leaderId ?? -1;
    const broker = this.#cache.brokers.get(leaderId);
    if (broker === undefined) {
      throw new ConchError(
        ErrorCode.NOT_COORDINATOR,
        `group "${group}" has no coordinator now: ${OFFSETS_TOPIC} partition ${partition} has no live leader`,
      );
    }
    return broker;
  }

  /** Whether the topic and every one of its partition records are in the view. */
  #ready(): boolean {
    const topic = this.#cache.topics.get(OFFSETS_TOPIC)?.value;
    return topic !== undefined && (this.#cache.partitions.get(OFFSETS_TOPIC)?.size ?? 0) >= topic.partitions;
  }

  async #create(): Promise<void> {
    const live = this.#cache.brokers.size;
    const rf = Math.max(1, Math.min(OFFSETS_TOPIC_MAX_REPLICAS, live));
    const configs: Record<string, string> = { ...OFFSETS_TOPIC_CONFIGS };
    if (rf > 2) configs[MIN_INSYNC_REPLICAS_CONFIG] = "2";
    try {
      await this.#topics.createTopic(OFFSETS_TOPIC, this.#partitions, configs, rf);
      return;
    } catch (err) {
      // Another broker made it first: wait for its partition records as a create would.
      if (!(err instanceof ConchError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
    }
    if (!(await this.#cache.waitFor(() => this.#ready(), 10_000))) {
      throw new ConchError(ErrorCode.NOT_COORDINATOR, `${OFFSETS_TOPIC} has no partition records yet`);
    }
  }
}

/**
 * Where a group's coordinator is in cluster mode (docs/cluster.md, "Consumer groups"): the leader
 * of the group's `__consumer_offsets` partition (group-partition.ts). src/cluster/ implements it
 * over the cluster's metadata; a single-node broker has none and coordinates every group itself.
 */
import type { ClusterBroker } from "./cluster-metadata.js";

export interface GroupPlacement {
  /**
   * The broker coordinating `group`, making the offsets topic first when the cluster has none.
   * Throws NOT_COORDINATOR (retriable) while the group's partition has no leader.
   */
  coordinator(group: string): Promise<ClusterBroker>;
}

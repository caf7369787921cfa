/**
 * The HTTP API's group list in cluster mode: the groups of every live broker, as `conch group list`
 * gathers them (each broker answers for the groups it coordinates). The others are asked at once,
 * bounded by PEER_ANSWER_TIMEOUT_MS; a broker that does not answer in time is named in
 * `brokersNotAnswering`, so that a short list does not read as the whole.
 */
import type { Broker } from "../broker/broker.js";
import type { ClusterMetadata } from "../broker/cluster-metadata.js";
import { PEER_ANSWER_TIMEOUT_MS } from "../broker/cluster-topic-view.js";
import type { GroupListing } from "../broker/group-description.js";

export async function clusterGroups(
  broker: Broker,
  cluster: ClusterMetadata,
): Promise<{ groups: GroupListing[]; brokersNotAnswering: number[] }> {
  const byName = new Map<string, GroupListing>();
  for (const g of broker.groups.listGroups()) byName.set(g.group, g);
  const silent: number[] = [];
  const others = cluster.brokers().filter((b) => b.id !== cluster.brokerId);
  await Promise.all(
    others.map((b) =>
      cluster.askGroups(b.id, PEER_ANSWER_TIMEOUT_MS).then(
        // A group moving between coordinators may be listed twice for a moment: once is enough.
        (list) => {
          for (const g of list) if (!byName.has(g.group)) byName.set(g.group, g);
        },
        () => {
          silent.push(b.id);
        },
      ),
    ),
  );
  const groups = [...byName.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
  return { groups, brokersNotAnswering: silent.sort((a, b) => a - b) };
}

/**
 * What a broker asks the other brokers for a listing from any broker: the figures of the partitions
 * a broker leads (DescribeTopic version 3 at scope LED_HERE, for broker/cluster-topic-view.ts) and
 * the groups it coordinates (ListGroups version 2, for the HTTP API's group list). One connection
 * per broker asked, opened on first use and again once it closed or the broker's address changed,
 * like the followers' (no TLS or login: the brokers' own network). Each ask is bounded as a whole,
 * connect included, by the caller's time limit.
 */
import type { PartitionFigures } from "../broker/cluster-metadata.js";
import type { GroupListing } from "../broker/group-description.js";
import { Connection, type ConnectionOptions } from "../client/connection.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { DescribeScope } from "../protocol/describe-topic.js";
import {
  decodeDescribeTopicResponseV3,
  encodeDescribeTopicRequestV3,
} from "../protocol/describe-topic-v3.js";
import { groupKindName } from "../protocol/group-kind.js";
import { groupStateName } from "../protocol/group-state.js";
import { decodeListGroupsResponseV2, encodeListGroupsRequestV2 } from "../protocol/list-groups-v2.js";
import type { BrokerEndpoint } from "./roles.js";

interface Link {
  readonly host: string;
  readonly port: number;
  readonly connection: Promise<Connection>;
}

export class PeerRequests {
  readonly #endpoint: (brokerId: number) => BrokerEndpoint | undefined;
  readonly #options: ConnectionOptions;
  readonly #links = new Map<number, Link>();
  #closed = false;

  constructor(selfId: number, endpoint: (brokerId: number) => BrokerEndpoint | undefined) {
    this.#endpoint = endpoint;
    this.#options = {
      clientId: `conch-describe-${selfId}`,
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 10_000,
    };
  }

  async figures(leaderId: number, topic: string, timeoutMs: number): Promise<PartitionFigures[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    const conn = await this.#connection(leaderId, signal);
    const res = await conn.request(
      encodeDescribeTopicRequestV3,
      { topic, scope: DescribeScope.LED_HERE },
      decodeDescribeTopicResponseV3,
      { signal },
    );
    const out: PartitionFigures[] = [];
    for (const p of res.partitions) {
      if (p.figuresKnown !== true || p.leaderId !== leaderId) continue;
      out.push({
        partition: p.partition,
        logStartOffset: p.logStartOffset,
        logEndOffset: p.logEndOffset ?? p.highWatermark,
        highWatermark: p.highWatermark,
        sizeBytes: p.sizeBytes ?? 0,
        segments: p.segments ?? 0,
        quarantined: p.quarantined ?? [],
      });
    }
    return out;
  }

  async groups(brokerId: number, timeoutMs: number): Promise<GroupListing[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    const conn = await this.#connection(brokerId, signal);
    const res = await conn.request(encodeListGroupsRequestV2, undefined, decodeListGroupsResponseV2, {
      signal,
    });
    return res.groups.map((g) => ({
      group: g.group,
      kind: groupKindName(g.kind),
      state: groupStateName(g.state),
      members: g.members,
      protocolType: g.protocolType,
    }));
  }

  #connection(brokerId: number, signal: AbortSignal): Promise<Connection> {
    if (this.#closed)
      return Promise.reject(new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is stopping"));
    const at = this.#endpoint(brokerId);
    if (at === undefined)
      return Promise.reject(new ConchError(ErrorCode.NOT_LEADER, `broker ${brokerId} is not registered`));
    const link = this.#links.get(brokerId);
    if (link !== undefined && link.host === at.host && link.port === at.port) {
      return link.connection.then((c) => (c.closed ? this.#open(brokerId, at, signal) : c));
    }
    link?.connection.then((c) => c.close()).catch(() => {});
    return this.#open(brokerId, at, signal);
  }

  #open(brokerId: number, at: BrokerEndpoint, signal: AbortSignal): Promise<Connection> {
    const connection = Connection.open({ host: at.host, port: at.port }, this.#options, signal);
    const link = { host: at.host, port: at.port, connection };
    this.#links.set(brokerId, link);
    // A failed open is forgotten, so that the next ask tries again.
    connection.catch(() => {
      if (this.#links.get(brokerId) === link) this.#links.delete(brokerId);
    });
    return connection;
  }

  close(): void {
    this.#closed = true;
    for (const link of this.#links.values()) link.connection.then((c) => c.close()).catch(() => {});
    this.#links.clear();
  }
}

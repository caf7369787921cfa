/**
 * 16 Metadata, version 1: the brokers of the cluster and, per partition, its leader, leader epoch,
 * replicas and in-sync replicas, so that a client sends each partition's requests to its leader
 * (docs/cluster.md). A single-node broker answers as broker 0 at host "" and port 0, which
 * means "the broker this connection is to".
 *
 *   request  body = topics array<string>            (empty: every topic)
 *   response body = brokerId u32 | controllerId u32 (NO_BROKER: none)
 *                   brokers array<id u32 | host string | port u16>
 *                   topics array<name string | errorCode u16
 *                                 | partitions array<partition u32 | leaderId u32 (NO_BROKER: offline)
 *                                                    | leaderEpoch u32 | replicas array<u32> | isr array<u32>>>
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import type { WireReader } from "./wire-reader.js";
import { stringSize } from "./wire-writer.js";

/** u32 standing for "no broker" (-1 in memory): no controller, or an offline partition. */
export const NO_BROKER = 0xffffffff;

export interface MetadataBrokerEntry {
  id: number;
  host: string;
  port: number;
}

export interface MetadataPartitionEntry {
  partition: number;
  /** -1: offline. */
  leaderId: number;
  leaderEpoch: number;
  replicas: readonly number[];
  isr: readonly number[];
}

export interface MetadataTopicEntry {
  name: string;
  errorCode: number;
  partitions: readonly MetadataPartitionEntry[];
}

export interface MetadataResponse {
  brokerId: number;
  /** -1: none. */
  controllerId: number;
  brokers: readonly MetadataBrokerEntry[];
  topics: readonly MetadataTopicEntry[];
}

export function encodeMetadataRequest(correlationId: number, topics: readonly string[]): Buffer {
  let size = 4;
  for (const t of topics) size += stringSize(t);
  const w = requestWriter(ApiKey.METADATA, correlationId, size).count(topics.length);
  for (const t of topics) w.string(t);
  return w.finish();
}

export function decodeMetadataRequest(frame: Buffer): string[] {
  const r = requestBodyReader(frame);
  const n = r.count(2);
  const topics = new Array<string>(n);
  for (let i = 0; i < n; i++) topics[i] = r.string();
  r.done();
  return topics;
}

/** A broker id on the wire: -1 (none) as NO_BROKER. */
export const brokerIdToWire = (id: number): number => (id < 0 ? NO_BROKER : id);
export const brokerIdFromWire = (id: number): number => (id === NO_BROKER ? -1 : id);

export function encodeMetadataResponse(correlationId: number, res: MetadataResponse): Buffer {
  let size = 4 + 4 + 4 + 4;
  for (const b of res.brokers) size += 4 + stringSize(b.host) + 2;
  for (const t of res.topics) {
    size += stringSize(t.name) + 2 + 4;
    for (const p of t.partitions) size += 4 + 4 + 4 + 4 + 4 * p.replicas.length + 4 + 4 * p.isr.length;
  }
  const w = responseWriter(correlationId, size).u32(res.brokerId).u32(brokerIdToWire(res.controllerId));
  w.count(res.brokers.length);
  for (const b of res.brokers) w.u32(b.id).string(b.host).u16(b.port);
  w.count(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name).u16(t.errorCode).count(t.partitions.length);
    for (const p of t.partitions) {
      w.u32(p.partition).u32(brokerIdToWire(p.leaderId)).u32(p.leaderEpoch).count(p.replicas.length);
      for (const id of p.replicas) w.u32(id);
      w.count(p.isr.length);
      for (const id of p.isr) w.u32(id);
    }
  }
  return w.finish();
}

/** An array<u32> of broker ids (replicas, ISR). */
export function readBrokerIds(r: WireReader): number[] {
  const n = r.count(4);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = r.u32();
  return out;
}

export function decodeMetadataResponse(frame: Buffer): MetadataResponse {
  const r = responseBodyReader(frame);
  const brokerId = r.u32();
  const controllerId = brokerIdFromWire(r.u32());
  const brokers: MetadataBrokerEntry[] = [];
  for (let n = r.count(4 + 2 + 2), i = 0; i < n; i++)
    brokers.push({ id: r.u32(), host: r.string(), port: r.u16() });
  const topics: MetadataTopicEntry[] = [];
  for (let n = r.count(2 + 2 + 4), i = 0; i < n; i++) {
    const name = r.string();
    const errorCode = r.u16();
    const partitions: MetadataPartitionEntry[] = [];
    for (let m = r.count(20), j = 0; j < m; j++) {
      partitions.push({
        partition: r.u32(),
        leaderId: brokerIdFromWire(r.u32()),
        leaderEpoch: r.u32(),
        replicas: readBrokerIds(r),
        isr: readBrokerIds(r),
      });
    }
    topics.push({ name, errorCode, partitions });
  }
  r.done();
  return { brokerId, controllerId, brokers, topics };
}

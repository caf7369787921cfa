/**
 * 17 ReassignPartitions, version 1 (cluster mode, docs/cluster.md "Reassignment"): moves each
 * listed partition to a new replica list, the preferred leader first.
 *
 *   request  body = moves count u32 | (topic string | partition u32 | replicas count u32 | broker id u32 *)*
 *   response body = (empty)
 *
 * Answered once the moves are recorded in the cluster's metadata, not when they are done: the new
 * replicas catch up, join the ISR, and the old ones are dropped, while producers and consumers
 * keep running. Refused with UNKNOWN_TOPIC, UNKNOWN_PARTITION, INVALID_REPLICA_ASSIGNMENT (a
 * list that is empty, repeats a broker or names an unregistered one) and INVALID_REQUEST on a
 * single-node broker.
 */
import { ApiKey } from "./api.js";
import { decodeEmptyResponse, encodeEmptyResponse } from "./empty-response.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface PartitionReassignment {
  topic: string;
  partition: number;
  replicas: number[];
}

export interface ReassignPartitionsRequest {
  moves: PartitionReassignment[];
}

export function encodeReassignPartitionsRequest(
  correlationId: number,
  req: ReassignPartitionsRequest,
): Buffer {
  let size = 4;
  for (const m of req.moves) size += stringSize(m.topic) + 8 + 4 * m.replicas.length;
  const w = requestWriter(ApiKey.REASSIGN_PARTITIONS, correlationId, size).count(req.moves.length);
  for (const m of req.moves) {
    w.string(m.topic).u32(m.partition).count(m.replicas.length);
    for (const id of m.replicas) w.u32(id);
  }
  return w.finish();
}

export function decodeReassignPartitionsRequest(frame: Buffer): ReassignPartitionsRequest {
  const r = requestBodyReader(frame);
  // Each move takes 10 bytes at the least (an empty topic name, no replicas): the count is bounded by the frame.
  const n = r.count(10);
  const moves: PartitionReassignment[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const topic = r.string();
    const partition = r.u32();
    const replicas: number[] = new Array(r.count(4));
    for (let j = 0; j < replicas.length; j++) replicas[j] = r.u32();
    moves[i] = { topic, partition, replicas };
  }
  r.done();
  return { moves };
}

export const encodeReassignPartitionsResponse = encodeEmptyResponse;
export const decodeReassignPartitionsResponse = decodeEmptyResponse;

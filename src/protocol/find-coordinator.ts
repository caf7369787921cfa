/**
 * 29 FindCoordinator, version 1: the broker that coordinates a group (docs/cluster.md, "Consumer
 * groups"): in cluster mode the leader of the group's `__consumer_offsets` partition. A
 * single-node broker answers as broker 0 at host "" and port 0, which means "the broker this
 * connection is to", as Metadata does.
 *
 *   request  body = group string
 *   response body = brokerId u32 | host string | port u16
 *
 * NOT_COORDINATOR (retriable) while the group's offsets partition has no leader.
 */
import { ApiKey } from "./api.js";
import { responseBodyReader } from "./error-response.js";
import { requestBodyReader, requestWriter, responseWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

export interface FindCoordinatorRequest {
  group: string;
}

export interface FindCoordinatorResponse {
  brokerId: number;
  /** "" with port 0: the broker the request went to. */
  host: string;
  port: number;
}

export function encodeFindCoordinatorRequest(correlationId: number, req: FindCoordinatorRequest): Buffer {
  return requestWriter(ApiKey.FIND_COORDINATOR, correlationId, stringSize(req.group))
    .string(req.group)
    .finish();
}

export function decodeFindCoordinatorRequest(frame: Buffer): FindCoordinatorRequest {
  const r = requestBodyReader(frame);
  const group = r.string();
  r.done();
  return { group };
}

export function encodeFindCoordinatorResponse(correlationId: number, res: FindCoordinatorResponse): Buffer {
  return responseWriter(correlationId, 4 + stringSize(res.host) + 2)
    .u32(res.brokerId)
    .string(res.host)
    .u16(res.port)
    .finish();
}

export function decodeFindCoordinatorResponse(frame: Buffer): FindCoordinatorResponse {
  const r = responseBodyReader(frame);
  const brokerId = r.u32();
  const host = r.string();
  const port = r.u16();
  r.done();
  return { brokerId, host, port };
}

/**
 * 10 FindCoordinator, versions 0-2: which broker coordinates a group (or a transactional id).
 *
 *   request v0    = key string                                (a group id)
 *   request v1-2  = key string | key_type int8                (0 group, 1 transaction)
 *   response v0   = error_code int16 | node_id int32 | host string | port int32
 *   response v1-2 = throttle_time_ms int32 | error_code int16 | error_message nullable_string
 *                   | node_id int32 | host string | port int32
 *
 * kafka-python calls v0 GroupCoordinator.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export const CoordinatorKeyType = { GROUP: 0, TRANSACTION: 1 } as const;

export interface FindCoordinatorRequest {
  key: string;
  keyType: number;
}

export interface FindCoordinatorResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  nodeId: number;
  host: string;
  port: number;
}

export function decodeFindCoordinatorRequest(h: KafkaRequestHeader): FindCoordinatorRequest {
  const v = checkVersion(h, ApiKey.FIND_COORDINATOR);
  const r = h.body;
  const key = r.string();
  const keyType = v >= 1 ? r.int8() : CoordinatorKeyType.GROUP;
  if (keyType !== CoordinatorKeyType.GROUP && keyType !== CoordinatorKeyType.TRANSACTION) {
    throw r.malformed(`coordinator key type ${keyType}`);
  }
  r.done();
  return { key, keyType };
}

function writeBody(w: KafkaSink, v: number, res: FindCoordinatorResponse): void {
  if (v >= 1) w.int32(res.throttleTimeMs);
  w.int16(res.errorCode);
  if (v >= 1) w.nullableString(res.errorMessage);
  w.int32(res.nodeId);
  w.string(res.host);
  w.int32(res.port);
}

export function encodeFindCoordinatorResponse(
  correlationId: number,
  version: number,
  res: FindCoordinatorResponse,
): Buffer {
  return encodeResponse(ApiKey.FIND_COORDINATOR, version, correlationId, writeBody, res);
}

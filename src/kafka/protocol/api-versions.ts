/**
 * 18 ApiVersions, versions 0-3: the handshake every client opens with.
 *
 *   request v0-2 = (empty)
 *   request v3   = client_software_name compact_string | client_software_version compact_string
 *                  | tagged_fields                                   (request header v2)
 *   response v0  = error_code int16 | api_keys [api_key int16 | min_version int16 | max_version int16]
 *   response v1-2= v0 | throttle_time_ms int32
 *   response v3  = error_code int16
 *                  | api_keys compact_array [api_key int16 | min_version int16 | max_version int16
 *                                            | tagged_fields]
 *                  | throttle_time_ms int32 | tagged_fields
 *
 * Every version's response has header v0. librdkafka opens with v3 and kafkajs with v2; both step
 * down when refused with UNSUPPORTED_VERSION. Conch answers v3 itself (the body costs nothing more
 * than v2's), and to a version above 3 answers error 35 in a v0 body (`encodeApiVersionsRefusal`),
 * which every client reads: it carries our ranges, so the client retries within them.
 */
import { ApiKey, SUPPORTED_APIS, type VersionRange } from "./api-keys.js";
import { KafkaErrorCode } from "./error-codes.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface ApiVersionsRequest {
  /** v3 only; null below. */
  clientSoftwareName: string | null;
  clientSoftwareVersion: string | null;
}

export interface ApiVersionsResponse {
  errorCode: number;
  apis: readonly VersionRange[];
  throttleTimeMs: number;
}

export function decodeApiVersionsRequest(h: KafkaRequestHeader): ApiVersionsRequest {
  const v = checkVersion(h, ApiKey.API_VERSIONS);
  const r = h.body;
  let clientSoftwareName: string | null = null;
  let clientSoftwareVersion: string | null = null;
  if (v >= 3) {
    clientSoftwareName = r.compactString();
    clientSoftwareVersion = r.compactString();
    r.skipTaggedFields();
  }
  r.done();
  return { clientSoftwareName, clientSoftwareVersion };
}

function writeBody(w: KafkaSink, v: number, res: ApiVersionsResponse): void {
  w.int16(res.errorCode);
  if (v >= 3) w.compactArrayCount(res.apis.length);
  else w.arrayCount(res.apis.length);
  for (const api of res.apis) {
    w.int16(api.apiKey);
    w.int16(api.min);
    w.int16(api.max);
    if (v >= 3) w.emptyTaggedFields();
  }
  if (v >= 1) w.int32(res.throttleTimeMs);
  if (v >= 3) w.emptyTaggedFields();
}

export function encodeApiVersionsResponse(
  correlationId: number,
  version: number,
  res: ApiVersionsResponse,
): Buffer {
  return encodeResponse(ApiKey.API_VERSIONS, version, correlationId, writeBody, res);
}

/** Conch's answer to a supported ApiVersions request: no error, every supported range. */
export function encodeApiVersions(correlationId: number, version: number): Buffer {
  return encodeApiVersionsResponse(correlationId, version, {
    errorCode: KafkaErrorCode.NONE,
    apis: SUPPORTED_APIS,
    throttleTimeMs: 0,
  });
}

/** The answer to an ApiVersions version Conch does not speak: error 35 and our ranges, in a v0 body. */
export function encodeApiVersionsRefusal(correlationId: number): Buffer {
  return encodeApiVersionsResponse(correlationId, 0, {
    errorCode: KafkaErrorCode.UNSUPPORTED_VERSION,
    apis: SUPPORTED_APIS,
    throttleTimeMs: 0,
  });
}

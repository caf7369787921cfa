/**
 * ApiVersions: the versions of exactly the APIs this broker serves (the handler table), so a
 * client never picks an API that would close its connection. Answered at any supported version
 * (librdkafka opens with v3, kafkajs with v2, kafka-python with v0); a higher version is refused
 * with error 35 in a v0 body that still lists our ranges (docs/kafka.md, "The handshake").
 */
import { SUPPORTED_APIS, type VersionRange } from "../../protocol/api-keys.js";
import { decodeApiVersionsRequest, encodeApiVersionsResponse } from "../../protocol/api-versions.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import type { KafkaHandler, KafkaHandlerTable } from "../kafka-handler.js";

/** The advertised ranges: the codec's, for the APIs that have a handler. */
export function servedApis(table: KafkaHandlerTable): VersionRange[] {
  return SUPPORTED_APIS.filter((api) => table.has(api.apiKey));
}

export function apiVersionsHandler(table: KafkaHandlerTable): KafkaHandler {
  // Computed on first use: handlers may be added to the table after this one.
  let apis: VersionRange[] | null = null;
  return {
    doneWithFrame: true,
    handle(_ctx, h) {
      decodeApiVersionsRequest(h);
      apis ??= servedApis(table);
      return encodeApiVersionsResponse(h.correlationId, h.apiVersion, {
        errorCode: KafkaErrorCode.NONE,
        apis,
        throttleTimeMs: 0,
      });
    },
  };
}

/** The answer to an ApiVersions version we do not speak. */
export function refuseApiVersion(table: KafkaHandlerTable, correlationId: number): Buffer {
  return encodeApiVersionsResponse(correlationId, 0, {
    errorCode: KafkaErrorCode.UNSUPPORTED_VERSION,
    apis: servedApis(table),
    throttleTimeMs: 0,
  });
}

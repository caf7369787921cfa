/**
 * Every request decoder by API key, so that a listener (and the fuzz tests) can decode any frame
 * in one call. An API that is not in the table, or a version outside its range, is refused with
 * UNSUPPORTED_VERSION after the header is read, so the caller still knows whom to answer.
 */
import { ConchError, ErrorCode } from "../../format/errors.js";
import { ApiKey } from "./api-keys.js";
import { decodeApiVersionsRequest } from "./api-versions.js";
import { decodeCreatePartitionsRequest } from "./create-partitions.js";
import { decodeCreateTopicsRequest } from "./create-topics.js";
import { decodeDeleteTopicsRequest } from "./delete-topics.js";
import { decodeDescribeConfigsRequest } from "./describe-configs.js";
import { decodeDescribeGroupsRequest } from "./describe-groups.js";
import { decodeFetchRequest } from "./fetch.js";
import { decodeFindCoordinatorRequest } from "./find-coordinator.js";
import { decodeRequestHeader, type KafkaRequestHeader } from "./frame.js";
import { decodeHeartbeatRequest } from "./heartbeat.js";
import { decodeInitProducerIdRequest } from "./init-producer-id.js";
import { decodeJoinGroupRequest } from "./join-group.js";
import { decodeLeaveGroupRequest } from "./leave-group.js";
import { decodeListGroupsRequest } from "./list-groups.js";
import { decodeListOffsetsRequest } from "./list-offsets.js";
import { decodeMetadataRequest } from "./metadata.js";
import { decodeOffsetCommitRequest } from "./offset-commit.js";
import { decodeOffsetFetchRequest } from "./offset-fetch.js";
import { decodeProduceRequest } from "./produce.js";
import { decodeSaslAuthenticateRequest } from "./sasl-authenticate.js";
import { decodeSaslHandshakeRequest } from "./sasl-handshake.js";
import { decodeSyncGroupRequest } from "./sync-group.js";

export type RequestDecoder = (h: KafkaRequestHeader) => object;

export const REQUEST_DECODERS: ReadonlyMap<number, RequestDecoder> = new Map<number, RequestDecoder>([
  [ApiKey.PRODUCE, decodeProduceRequest],
  [ApiKey.FETCH, decodeFetchRequest],
  [ApiKey.LIST_OFFSETS, decodeListOffsetsRequest],
  [ApiKey.METADATA, decodeMetadataRequest],
  [ApiKey.OFFSET_COMMIT, decodeOffsetCommitRequest],
  [ApiKey.OFFSET_FETCH, decodeOffsetFetchRequest],
  [ApiKey.FIND_COORDINATOR, decodeFindCoordinatorRequest],
  [ApiKey.JOIN_GROUP, decodeJoinGroupRequest],
  [ApiKey.HEARTBEAT, decodeHeartbeatRequest],
  [ApiKey.LEAVE_GROUP, decodeLeaveGroupRequest],
  [ApiKey.SYNC_GROUP, decodeSyncGroupRequest],
  [ApiKey.DESCRIBE_GROUPS, decodeDescribeGroupsRequest],
  [ApiKey.LIST_GROUPS, decodeListGroupsRequest],
  [ApiKey.SASL_HANDSHAKE, decodeSaslHandshakeRequest],
  [ApiKey.API_VERSIONS, decodeApiVersionsRequest],
  [ApiKey.CREATE_TOPICS, decodeCreateTopicsRequest],
  [ApiKey.DELETE_TOPICS, decodeDeleteTopicsRequest],
  [ApiKey.INIT_PRODUCER_ID, decodeInitProducerIdRequest],
  [ApiKey.DESCRIBE_CONFIGS, decodeDescribeConfigsRequest],
  [ApiKey.SASL_AUTHENTICATE, decodeSaslAuthenticateRequest],
  [ApiKey.CREATE_PARTITIONS, decodeCreatePartitionsRequest],
]);

export interface DecodedKafkaRequest {
  header: KafkaRequestHeader;
  request: object;
}

/** Decodes a whole request frame: its header, then its body by API key and version. */
export function decodeKafkaRequest(frame: Buffer): DecodedKafkaRequest {
  const header = decodeRequestHeader(frame);
  const decode = REQUEST_DECODERS.get(header.apiKey);
  if (decode === undefined) {
    throw new ConchError(ErrorCode.UNSUPPORTED_VERSION, `kafka api ${header.apiKey} is not supported`);
  }
  return { header, request: decode(header) };
}

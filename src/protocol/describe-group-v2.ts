/**
 * 26 DescribeGroup, version 2: version 1 with the group's kind and protocol type at the end.
 *
 *   request  body = group string                                              (as version 1)
 *   response body = (version 1's response body) | kind u8 | protocolType string
 *
 * kind: 0 = native, 1 = Kafka (group-kind.ts). protocolType: a Kafka group's (e.g. "consumer"),
 * "" for a native group and for a group known only by its committed offsets.
 */
import { ApiKey, GROUP_KIND_VERSION } from "./api.js";
import {
  type DescribeGroupRequest,
  type DescribeGroupResponse,
  describeGroupBodySize,
  readDescribeGroupBody,
  writeDescribeGroupBody,
} from "./describe-group.js";
import { responseBodyReader } from "./error-response.js";
import { requestWriter, responseWriter } from "./frame.js";
import { type GroupKindValue, groupKindFromWire } from "./group-kind.js";
import { stringSize } from "./wire-writer.js";

export interface DescribeGroupResponseV2 extends DescribeGroupResponse {
  kind: GroupKindValue;
  protocolType: string;
}

export function encodeDescribeGroupRequestV2(correlationId: number, req: DescribeGroupRequest): Buffer {
  return requestWriter(ApiKey.DESCRIBE_GROUP, correlationId, stringSize(req.group), 0, GROUP_KIND_VERSION)
    .string(req.group)
    .finish();
}

export function encodeDescribeGroupResponseV2(correlationId: number, res: DescribeGroupResponseV2): Buffer {
  const size = describeGroupBodySize(res) + 1 + stringSize(res.protocolType);
  return writeDescribeGroupBody(responseWriter(correlationId, size), res)
    .u8(res.kind)
    .string(res.protocolType)
    .finish();
}

export function decodeDescribeGroupResponseV2(frame: Buffer): DescribeGroupResponseV2 {
  const r = responseBodyReader(frame);
  const body = readDescribeGroupBody(r);
  const kind = groupKindFromWire(r.u8());
  const protocolType = r.string();
  r.done();
  return { ...body, kind, protocolType };
}

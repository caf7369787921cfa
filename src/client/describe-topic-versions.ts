/**
 * DescribeTopic at the newest version the broker speaks: 3, else 2, else 1 (an older broker answers
 * UNSUPPORTED_VERSION to a version it does not know). Version 3 answers at once where the older
 * ones wait or fail: a single-node broker still recovering the topic after a crash, a cluster whose
 * leader is silent. Its partitions whose figures are not known say so (`figuresKnown: false`).
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import {
  type DescribeTopicRequest,
  type DescribeTopicResponse,
  decodeDescribeTopicResponse,
  encodeDescribeTopicRequest,
} from "../protocol/describe-topic.js";
import {
  decodeDescribeTopicResponseV2,
  encodeDescribeTopicRequestV2,
} from "../protocol/describe-topic-v2.js";
import {
  decodeDescribeTopicResponseV3,
  encodeDescribeTopicRequestV3,
} from "../protocol/describe-topic-v3.js";
import type { Decoder, Encoder, RequestOptions } from "./connection.js";
import type { ConnectionManager } from "./connection-manager.js";

/** Each version's request and response codecs, the newest first. */
const VERSIONS: readonly [Encoder<DescribeTopicRequest>, Decoder<DescribeTopicResponse>][] = [
  [encodeDescribeTopicRequestV3, decodeDescribeTopicResponseV3],
  [encodeDescribeTopicRequestV2, decodeDescribeTopicResponseV2],
  [encodeDescribeTopicRequest, decodeDescribeTopicResponse],
];

export async function describeTopicNewest(
  manager: ConnectionManager,
  topic: string,
  options: RequestOptions = {},
): Promise<DescribeTopicResponse> {
  for (let i = 0; ; i++) {
    const [encode, decode] = VERSIONS[i]!;
    try {
      return await manager.request(encode, { topic }, decode, options);
    } catch (err) {
      // The oldest version's refusal, or any other error, is the answer.
      if (i === VERSIONS.length - 1 || !isUnsupported(err)) throw err;
    }
  }
}

function isUnsupported(err: unknown): boolean {
  return err instanceof ConchError && err.code === ErrorCode.UNSUPPORTED_VERSION;
}

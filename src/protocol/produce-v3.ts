/**
 * 5 Produce, version 3: one partitioned batch (docs/format.md, attribute bit 5) holding records for
 * many partitions of one topic, each record naming its partition. Served by brokers that agree to
 * protocol version 3 in the handshake (api.ts, PARTITIONED_PRODUCE_PROTOCOL_VERSION).
 *
 *   request  body = topic string | acks u8 | timeoutMs u32 | records bytes
 *   response body = version 2's (produce-v2.ts): one entry per partition, in the order each
 *                   partition first appears in the batch
 *
 * The broker checks the batch once and splits it into one ordinary batch per partition
 * (format/partitioned-batch.ts), appended in that order as version 2's entries are: a partition's
 * records get consecutive offsets in the order they came, so a client derives each record's offset
 * from its partition's baseOffset. A partition's failure (unknown partition, not its leader) is its
 * entry's errorCode and message; a batch that fails its check, or names more partitions than
 * MAX_PRODUCE_PARTITIONS, fails the whole request, as does a denied topic. With acks = 0 the broker
 * sends no response.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { Acks, type AcksValue, ApiKey } from "./api.js";
import { requestBodyReader, requestWriter } from "./frame.js";
import { stringSize } from "./wire-writer.js";

/** The apiVersion of this request. */
export const PRODUCE_PARTITIONED_VERSION = 3;

export interface PartitionedProduceRequest {
  topic: string;
  acks: AcksValue;
  timeoutMs: number;
  /** One partitioned batch. */
  records: Uint8Array;
}

/** acks u8 | timeoutMs u32 | records length u32 */
const FIXED_BYTES = 1 + 4 + 4;

/** The bytes of a request carrying a batch of `recordsBytes` (size field included). */
export function partitionedProduceRequestBytes(topic: string, recordsBytes: number): number {
  return 4 + 8 + stringSize(topic) + FIXED_BYTES + recordsBytes;
}

export function encodePartitionedProduceRequest(
  correlationId: number,
  req: PartitionedProduceRequest,
): Buffer {
  const size = stringSize(req.topic) + FIXED_BYTES + req.records.length;
  const w = requestWriter(ApiKey.PRODUCE, correlationId, size, 0, PRODUCE_PARTITIONED_VERSION);
  w.string(req.topic).u8(req.acks).u32(req.timeoutMs).bytes(req.records);
  return w.finish();
}

/** The request; its records are a view of the frame. */
export function decodePartitionedProduceRequest(frame: Buffer): PartitionedProduceRequest {
  const r = requestBodyReader(frame);
  const topic = r.string();
  const acks = r.u8();
  const timeoutMs = r.u32();
  const records = r.bytes();
  r.done();
  if (acks > Acks.ALL) throw new ConchError(ErrorCode.INVALID_REQUEST, `acks ${acks} is not 0, 1, 2 or 3`);
  return { topic, acks: acks as AcksValue, timeoutMs, records };
}

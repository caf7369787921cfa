/**
 * Kafka's framing: every request and response is an int32 size and then that many bytes.
 *
 *   request  = size int32 | api_key int16 | api_version int16 | correlation_id int32
 *              | client_id nullable_string                  (header v1)
 *              | tagged_fields                              (header v2: flexible versions)
 *              | body
 *   response = size int32 | correlation_id int32
 *              | tagged_fields                              (header v1: flexible versions)
 *              | body
 *
 * Decoders take a whole frame, size field included, as a frame parser hands it over; the size must
 * agree with the frame's length. The header is decoded even for an API or version Conch does not
 * support, so that the broker can answer UNSUPPORTED_VERSION to the right correlation id (a client
 * that is refused an ApiVersions version retries a lower one; one whose connection is closed gives
 * up). Header v0 (no client id) belongs only to ControlledShutdown v0, which no client sends us.
 */
import { ConchError, ErrorCode } from "../../format/errors.js";
import { JOIN_MAX_BYTES } from "../../net/socket-writes.js";
import { isFlexible, responseHeaderVersion, supportedApi } from "./api-keys.js";
import { KafkaReader } from "./kafka-reader.js";
import { type KafkaSink, KafkaSizer, KafkaWriter } from "./kafka-writer.js";

/** size int32 + api_key int16 + api_version int16 + correlation_id int32 + client_id length int16 */
export const MIN_REQUEST_FRAME = 4 + 2 + 2 + 4 + 2;

export interface KafkaRequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** Whether Conch decodes this API at this version. */
  supported: boolean;
  /** Positioned at the body, bounded by the frame. */
  body: KafkaReader;
}

/** Decodes a request's header; throws MALFORMED_REQUEST when the frame does not hold one. */
export function decodeRequestHeader(frame: Buffer): KafkaRequestHeader {
  const r = new KafkaReader(frame);
  const size = r.int32();
  if (size !== frame.length - 4)
    throw r.malformed(`size ${size} disagrees with a ${frame.length}-byte frame`);
  return readRequestHeader(r);
}

/**
 * `decodeRequestHeader` for a frame without its size field, as a transport's frame parser hands
 * it over (src/net/frame-parser.ts): the parser has already bounded the frame by its size.
 */
export function decodeUnsizedRequestHeader(frame: Buffer): KafkaRequestHeader {
  return readRequestHeader(new KafkaReader(frame));
}

function readRequestHeader(r: KafkaReader): KafkaRequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.nullableString();
  const api = supportedApi(apiKey);
  const supported = api !== undefined && apiVersion >= api.min && apiVersion <= api.max;
  if (supported && isFlexible(apiKey, apiVersion)) r.skipTaggedFields();
  return { apiKey, apiVersion, correlationId, clientId, supported, body: r };
}

/** Throws UNSUPPORTED_VERSION unless the header's version is within the API's supported range. */
export function checkVersion(h: KafkaRequestHeader, apiKey: number): number {
  const api = supportedApi(apiKey);
  if (h.apiKey !== apiKey || api === undefined || h.apiVersion < api.min || h.apiVersion > api.max) {
    throw new ConchError(
      ErrorCode.UNSUPPORTED_VERSION,
      `kafka api ${h.apiKey} version ${h.apiVersion} is not supported${api ? ` (${api.name} ${api.min}-${api.max})` : ""}`,
    );
  }
  return h.apiVersion;
}

/** Writes a response body at a version. Called twice per response: to size it, then to write it. */
export type BodyEncoder<T> = (w: KafkaSink, version: number, value: T) => void;

/** Reused for sizing every response: encoders never nest. */
const sizer = new KafkaSizer();

/**
 * A whole response frame: size, correlation id, the header's tagged fields when the version is
 * flexible, then the body, in one buffer sized before it is written.
 */
export function encodeResponse<T>(
  apiKey: number,
  version: number,
  correlationId: number,
  body: BodyEncoder<T>,
  value: T,
): Buffer {
  const size = frameSize(apiKey, version, body, value);
  const w = new KafkaWriter(4 + size);
  writeFrame(w, size, apiKey, version, correlationId, body, value);
  return w.finish();
}

/**
 * `encodeResponse` for a response that may be large (a fetch): up to JOIN_MAX_BYTES it is one
 * buffer, as there; past it, the pieces of a referencing writer (kafka-writer.ts), which the
 * transport writes corked as one writev, so the bytes `bytesOf` was given (stored batches) are
 * never copied. The first piece always holds the header and the body's first fields.
 */
export function encodeResponsePieces<T>(
  apiKey: number,
  version: number,
  correlationId: number,
  body: BodyEncoder<T>,
  value: T,
): Buffer | Buffer[] {
  const size = frameSize(apiKey, version, body, value);
  if (4 + size <= JOIN_MAX_BYTES) {
    const whole = new KafkaWriter(4 + size);
    writeFrame(whole, size, apiKey, version, correlationId, body, value);
    return whole.finish();
  }
  // Headers only: Buffer.allocUnsafe carves one this small from Node's shared pool.
  const w = KafkaWriter.referencing(4 + size - sizer.referenced);
  writeFrame(w, size, apiKey, version, correlationId, body, value);
  return w.finishPieces();
}

/** The frame's size field: what follows it. Leaves `sizer` holding the body's sizes. */
function frameSize<T>(apiKey: number, version: number, body: BodyEncoder<T>, value: T): number {
  body(sizer.reset(), version, value);
  return 4 + (responseHeaderVersion(apiKey, version) === 1 ? 1 : 0) + sizer.size;
}

function writeFrame<T>(
  w: KafkaWriter,
  size: number,
  apiKey: number,
  version: number,
  correlationId: number,
  body: BodyEncoder<T>,
  value: T,
): void {
  w.int32(size);
  w.int32(correlationId);
  if (responseHeaderVersion(apiKey, version) === 1) w.emptyTaggedFields();
  body(w, version, value);
}

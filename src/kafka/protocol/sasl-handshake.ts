/**
 * 17 SaslHandshake, versions 0-1: the client names the SASL mechanism it will use; the broker
 * answers with the mechanisms it offers (and UNSUPPORTED_SASL_MECHANISM when the named one is not
 * among them).
 *
 *   request v0-1  = mechanism string
 *   response v0-1 = error_code int16 | mechanisms [string]
 *
 * The versions differ in what follows: after v0 the SASL tokens travel bare, each framed by an
 * int32 size with no Kafka header; after v1 they travel inside SaslAuthenticate requests. Both
 * decode here and both are advertised (librdkafka takes a range without v0 to mean the broker has
 * no SASL at all), but the Kafka session serves only v1 (docs/kafka.md, "Authentication"):
 * librdkafka, kafkajs and the Java client all use it, and a bare token cannot be told from a request.
 */
import { ApiKey } from "./api-keys.js";
import { checkVersion, encodeResponse, type KafkaRequestHeader } from "./frame.js";
import type { KafkaSink } from "./kafka-writer.js";

export interface SaslHandshakeRequest {
  mechanism: string;
}

export interface SaslHandshakeResponse {
  errorCode: number;
  mechanisms: readonly string[];
}

export function decodeSaslHandshakeRequest(h: KafkaRequestHeader): SaslHandshakeRequest {
  checkVersion(h, ApiKey.SASL_HANDSHAKE);
  const r = h.body;
  const mechanism = r.string();
  r.done();
  return { mechanism };
}

function writeBody(w: KafkaSink, _v: number, res: SaslHandshakeResponse): void {
  w.int16(res.errorCode);
  w.arrayCount(res.mechanisms.length);
  for (const m of res.mechanisms) w.string(m);
}

export function encodeSaslHandshakeResponse(
  correlationId: number,
  version: number,
  res: SaslHandshakeResponse,
): Buffer {
  return encodeResponse(ApiKey.SASL_HANDSHAKE, version, correlationId, writeBody, res);
}

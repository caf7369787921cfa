/** The handshake: agrees on a protocol version and tells the client the broker's size limits. */
import { ConchError, ErrorCode } from "../format/errors.js";
import { PROTOCOL_MAX_VERSION, PROTOCOL_MIN_VERSION } from "../protocol/api.js";
import { decodeHandshakeRequest, encodeHandshakeResponse } from "../protocol/handshake.js";
import type { Reply, RequestContext } from "./handler.js";

export function handshake(ctx: RequestContext, frame: Buffer, correlationId: number): Reply {
  const req = decodeHandshakeRequest(frame);
  const version = Math.min(req.maxVersion, PROTOCOL_MAX_VERSION);
  if (version < Math.max(req.minVersion, PROTOCOL_MIN_VERSION)) {
    throw new ConchError(
      ErrorCode.UNSUPPORTED_VERSION,
      `no common protocol version: the client speaks ${req.minVersion}-${req.maxVersion}, ` +
        `the broker ${PROTOCOL_MIN_VERSION}-${PROTOCOL_MAX_VERSION}`,
    );
  }
  ctx.clientId = req.clientId;
  return encodeHandshakeResponse(correlationId, {
    version,
    maxFrameBytes: ctx.limits.maxFrameBytes,
    maxBatchBytes: ctx.limits.maxBatchBytes,
  });
}

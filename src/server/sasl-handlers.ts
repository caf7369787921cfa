/**
 * 13 SaslHandshake and 14 SaslAuthenticate (docs/security.md): a SASL login over the connection's
 * ConnectionAuth. A failed or out-of-turn step is answered and then the connection closes, so a
 * guesser pays a new connection (and the limiter's delay) per guess: the session closes it after
 * an error thrown here, and `authenticate` after its own.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import {
  decodeSaslAuthenticateRequest,
  encodeSaslAuthenticateResponse,
  MAX_SASL_MESSAGE_BYTES,
} from "../protocol/sasl-authenticate.js";
import { decodeSaslHandshakeRequest, encodeSaslHandshakeResponse } from "../protocol/sasl-handshake.js";
import type { ConnectionAuth } from "../security/connection-auth.js";
import type { Handler, Reply, RequestContext } from "./handler.js";

function authOf(ctx: RequestContext): ConnectionAuth {
  if (ctx.auth === null) {
    throw new ConchError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "SASL is not enabled on this listener");
  }
  return ctx.auth;
}

export const saslHandshake: Handler = (ctx, frame, correlationId) => {
  const auth = authOf(ctx);
  const { mechanism } = decodeSaslHandshakeRequest(frame);
  auth.handshake(mechanism);
  return encodeSaslHandshakeResponse(correlationId, { mechanisms: auth.mechanisms() });
};

export const saslAuthenticate: Handler = (ctx, frame, correlationId) => {
  const auth = authOf(ctx);
  const message = decodeSaslAuthenticateRequest(frame);
  if (message.length > MAX_SASL_MESSAGE_BYTES) {
    throw new ConchError(
      ErrorCode.AUTHENTICATION_FAILED,
      `SASL message of ${message.length} bytes; the limit is ${MAX_SASL_MESSAGE_BYTES}`,
    );
  }
  return authenticate(ctx, auth, message, correlationId);
};

async function authenticate(
  ctx: RequestContext,
  auth: ConnectionAuth,
  message: Buffer,
  correlationId: number,
): Promise<Reply> {
  try {
    const answer = await auth.step(message);
    if (auth.user !== null)
      ctx.logger.info({ principal: auth.principal, clientId: ctx.clientId }, "logged in");
    return encodeSaslAuthenticateResponse(correlationId, answer);
  } catch (err) {
    const why = auth.failure ?? (err instanceof Error ? err.message : String(err));
    ctx.limitedLog("login failed", { user: auth.claimedUser, why, clientId: ctx.clientId }, "login failed");
    ctx.endConnection();
    throw err;
  }
}

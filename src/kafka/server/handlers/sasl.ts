/**
 * SaslHandshake (17) and SaslAuthenticate (36): a SASL login over the connection's ConnectionAuth,
 * the same one the native protocol uses (docs/security.md). Registered only on a listener with
 * security. A refused mechanism, a step out of turn or a failed login is answered with its Kafka
 * code and then the connection closes, as Kafka closes it: a guesser pays a new connection, and
 * the failure limiter's delay, per guess.
 */

import { ConchError, ErrorCode } from "../../../format/errors.js";
import type { ConnectionAuth } from "../../../security/connection-auth.js";
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import type { KafkaRequestHeader } from "../../protocol/frame.js";
import {
  decodeSaslAuthenticateRequest,
  encodeSaslAuthenticateResponse,
} from "../../protocol/sasl-authenticate.js";
import { decodeSaslHandshakeRequest, encodeSaslHandshakeResponse } from "../../protocol/sasl-handshake.js";
import { kafkaErrorCode, kafkaErrorMessage } from "../kafka-errors.js";
import type { KafkaContext, KafkaHandler } from "../kafka-handler.js";

const NO_BYTES = Buffer.alloc(0);

function authOf(ctx: KafkaContext): ConnectionAuth {
  if (ctx.auth === null) {
    throw new ConchError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "SASL is not enabled on this listener");
  }
  return ctx.auth;
}

export const saslHandshakeHandler: KafkaHandler = {
  doneWithFrame: true,
  handle(ctx, h) {
    const auth = authOf(ctx);
    const { mechanism } = decodeSaslHandshakeRequest(h);
    if (h.apiVersion === 0) {
      // v0 would send the tokens bare after this answer, which the session would read as requests.
      throw new ConchError(
        ErrorCode.UNSUPPORTED_VERSION,
        "SaslHandshake v0 (bare SASL tokens) is not served: SaslHandshake v1 and SaslAuthenticate are",
      );
    }
    let errorCode: number = KafkaErrorCode.NONE;
    try {
      auth.handshake(mechanism);
    } catch (err) {
      errorCode = kafkaErrorCode(err);
      ctx.limitedLog(
        "login failed",
        { why: kafkaErrorMessage(err), clientId: ctx.clientId },
        "kafka SASL handshake refused",
      );
      ctx.endConnection();
    }
    return encodeSaslHandshakeResponse(h.correlationId, h.apiVersion, {
      errorCode,
      mechanisms: auth.mechanisms(),
    });
  },
};

/** Keeps the frame: the token is a view of it, read after the limiter's delay. */
export const saslAuthenticateHandler: KafkaHandler = {
  handle(ctx, h) {
    const auth = authOf(ctx);
    const { authBytes } = decodeSaslAuthenticateRequest(h);
    return authenticate(ctx, auth, authBytes, h);
  },
};

async function authenticate(
  ctx: KafkaContext,
  auth: ConnectionAuth,
  token: Buffer,
  h: KafkaRequestHeader,
): Promise<Buffer> {
  // Read now: another request of the connection may change it while this one waits.
  const clientId = ctx.clientId;
  let answer: Buffer;
  try {
    answer = await auth.step(token);
  } catch (err) {
    const why = auth.failure ?? kafkaErrorMessage(err);
    ctx.limitedLog("login failed", { user: auth.claimedUser, why, clientId }, "kafka login failed");
    ctx.endConnection();
    return encodeSaslAuthenticateResponse(h.correlationId, h.apiVersion, {
      errorCode: kafkaErrorCode(err),
      errorMessage: kafkaErrorMessage(err),
      authBytes: NO_BYTES,
      sessionLifetimeMs: 0,
    });
  }
  if (auth.user !== null) ctx.logger.info({ principal: auth.principal, clientId }, "logged in (kafka)");
  return encodeSaslAuthenticateResponse(h.correlationId, h.apiVersion, {
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    authBytes: answer,
    sessionLifetimeMs: 0,
  });
}

/**
 * What every pushed stream (FetchStream, ReplicaFetch) checks before it opens, and how it reads
 * its connection's end: the rules stay one, whichever stream it is.
 */
import { checkDurationMs } from "../format/duration.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { RequestContext } from "./handler.js";

/** Refuses a stream with no window or no room per response, a bad keep-alive, or an id in use. */
export function checkStreamRequest(
  ctx: RequestContext,
  id: number,
  what: string,
  req: { windowBytes: number; maxBytes: number; maxWaitMs: number },
): void {
  if (req.windowBytes < 1 || req.maxBytes < 1) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `a ${what} needs windowBytes and maxBytes of at least 1`);
  }
  // The keep-alive is a timer of maxWaitMs.
  checkDurationMs("maxWaitMs", req.maxWaitMs, 1);
  if (ctx.streams.streams.has(id)) {
    throw new ConchError(ErrorCode.INVALID_REQUEST, `${what} ${id} is already open`);
  }
}

/** A stream's end when its connection's signal aborted: the broker stopping is told, a closed connection is not. */
export function streamEndReason(ctx: RequestContext): ConchError | null {
  const reason: unknown = ctx.signal.reason;
  return reason instanceof ConchError && reason.code === ErrorCode.SHUTTING_DOWN ? reason : null;
}

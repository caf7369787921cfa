/**
 * What a Kafka group handler needs from the session that calls it (see index.ts).
 */
import type { GroupCoordinator } from "../../../broker/group-coordinator.js";
import type { AuthorizationContext } from "../../../server/authorize.js";
import type { KafkaRequestHeader } from "../../protocol/frame.js";

/**
 * `auth` and `authorization` (AuthorizationContext) are the connection's login and the ACLs: each
 * handler checks its group (and OffsetCommit its topics) once per request, as Kafka does
 * (../kafka-acl.ts). Both null: nothing is checked.
 */
export interface KafkaGroupContext extends AuthorizationContext {
  /** The broker; only its GroupCoordinator is used. */
  broker: { readonly groups: GroupCoordinator };
  /** This broker as Kafka clients reach it (what Metadata advertises): FindCoordinator's answer. */
  node: { nodeId: number; host: string; port: number };
  /** Aborts when the connection closes: a join or sync waiting for its group ends then. */
  signal: AbortSignal;
}

/**
 * One handler: the request's header as `decodeRequestHeader` left it (the body not yet read) in,
 * the whole encoded response frame out. Decoding errors (MALFORMED_REQUEST, UNSUPPORTED_VERSION)
 * are thrown for the session to deal with; everything the coordinator refuses is answered with
 * the Kafka error code in the response.
 */
export type KafkaGroupHandler = (
  ctx: KafkaGroupContext,
  header: KafkaRequestHeader,
) => Buffer | Promise<Buffer>;

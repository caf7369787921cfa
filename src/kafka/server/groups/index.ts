/**
 * Consumer groups for Kafka clients: the handlers of the nine group APIs, by Kafka API key, for
 * the Kafka session's dispatch to take in (docs/kafka.md, "Consumer groups").
 *
 * Signature (context.ts): `(ctx, header) => Buffer | Promise<Buffer>`.
 * - `ctx.broker`: the Broker (only `broker.groups`, its GroupCoordinator, is used);
 *   `ctx.node`: this broker as clients reach it `{ nodeId, host, port }` (FindCoordinator answers it);
 *   `ctx.signal`: aborts when the connection closes (a JoinGroup or SyncGroup waiting ends then).
 * - `header`: what `decodeRequestHeader(frame)` returned (api version, correlation id, client id),
 *   its body reader not yet read: each handler decodes its own request.
 * - The result is the whole response frame (size included). JoinGroup and SyncGroup wait for the
 *   group (a long poll), OffsetCommit for the fsync; a session answering in order holds the
 *   responses behind them, as Kafka does.
 * - Decoding errors (ConchError MALFORMED_REQUEST, UNSUPPORTED_VERSION) are thrown: the session
 *   decides (Kafka closes the connection). What the coordinator refuses is answered with Kafka's
 *   error code (../kafka-errors.ts, the one mapping); any other exception is a bug and is thrown on.
 */
import { ApiKey } from "../../protocol/api-keys.js";
import type { KafkaGroupHandler } from "./context.js";
import { describeGroups } from "./describe-groups.js";
import { findCoordinator } from "./find-coordinator.js";
import { heartbeat } from "./heartbeat.js";
import { joinGroup } from "./join-group.js";
import { leaveGroup } from "./leave-group.js";
import { listGroups } from "./list-groups.js";
import { offsetCommit } from "./offset-commit.js";
import { offsetFetch } from "./offset-fetch.js";
import { syncGroup } from "./sync-group.js";

export type { KafkaGroupContext, KafkaGroupHandler } from "./context.js";

export const KAFKA_GROUP_HANDLERS: ReadonlyMap<number, KafkaGroupHandler> = new Map<
  number,
  KafkaGroupHandler
>([
  [ApiKey.OFFSET_COMMIT, offsetCommit],
  [ApiKey.OFFSET_FETCH, offsetFetch],
  [ApiKey.FIND_COORDINATOR, findCoordinator],
  [ApiKey.JOIN_GROUP, joinGroup],
  [ApiKey.HEARTBEAT, heartbeat],
  [ApiKey.LEAVE_GROUP, leaveGroup],
  [ApiKey.SYNC_GROUP, syncGroup],
  [ApiKey.DESCRIBE_GROUPS, describeGroups],
  [ApiKey.LIST_GROUPS, listGroups],
]);

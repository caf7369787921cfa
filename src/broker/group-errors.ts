/** The errors the group coordinator answers with when a group is not what a request needs. */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { GroupKind } from "./group-description.js";

/** A native request for a Kafka group, or the other way round. */
export function otherKind(group: string, kind: GroupKind): ConchError {
  return new ConchError(
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    `group "${group}" is a ${kind} group: ${kind === "kafka" ? "Kafka" : "Conch"} clients are its members`,
  );
}

export function unknownGroup(group: string): ConchError {
  return new ConchError(ErrorCode.UNKNOWN_GROUP, `there is no group "${group}"`);
}

export function shuttingDown(): ConchError {
  return new ConchError(ErrorCode.SHUTTING_DOWN, "the broker is shutting down");
}

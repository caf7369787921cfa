/**
 * Topic names (docs/protocol.md): 1 to 249 characters of [A-Za-z0-9._-], never "." or "..".
 * A topic's name is also its directory name under `<dataDir>/topics/`, so this check is what keeps
 * a client from naming a path outside the data directory: no separator, no "..", nothing but ASCII.
 */
import { ConchError, ErrorCode } from "./errors.js";

export const MAX_TOPIC_NAME_LENGTH = 249;

/** Names with this prefix belong to the broker's internal topics (consumer offsets and the like). */
export const INTERNAL_TOPIC_PREFIX = "__";

const LEGAL = /^[A-Za-z0-9._-]+$/;

/** Whether `name` is in the internal namespace (it may still be invalid otherwise). */
export function isInternalTopicName(name: string): boolean {
  return name.startsWith(INTERNAL_TOPIC_PREFIX);
}

/**
 * Why `name` is not a legal topic name, or null when it is. Internal names are legal here; callers
 * that take names from clients use `checkTopicName`, which also refuses the internal namespace.
 */
export function topicNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return "topic name must be a string";
  if (name.length === 0) return "topic name must not be empty";
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `topic name is ${name.length} characters long; the limit is ${MAX_TOPIC_NAME_LENGTH}`;
  }
  if (name === "." || name === "..") return `topic name must not be "${name}"`;
  if (!LEGAL.test(name)) {
    return `topic name ${JSON.stringify(name)} may contain only ASCII letters, digits, '.', '_' and '-'`;
  }
  return null;
}

/**
 * Throws ConchError(INVALID_TOPIC_NAME) unless `name` is legal. Internal names are refused unless
 * `options.internal` is set: clients may not create or write the broker's own topics.
 */
export function checkTopicName(name: string, options: { internal?: boolean } = {}): void {
  const problem = topicNameProblem(name);
  if (problem !== null) throw new ConchError(ErrorCode.INVALID_TOPIC_NAME, problem);
  const internal = isInternalTopicName(name);
  if (internal && options.internal !== true) {
    throw new ConchError(
      ErrorCode.INVALID_TOPIC_NAME,
      `topic name ${JSON.stringify(name)} is reserved: names starting with "${INTERNAL_TOPIC_PREFIX}" are internal`,
    );
  }
  if (!internal && options.internal === true) {
    throw new ConchError(
      ErrorCode.INVALID_TOPIC_NAME,
      `internal topic name ${JSON.stringify(name)} must start with "${INTERNAL_TOPIC_PREFIX}"`,
    );
  }
}

/**
 * A list of topics with an error code each, and the throttle time before it in later versions: the
 * result of CreateTopics, DeleteTopics and CreatePartitions.
 *
 *   [throttle_time_ms int32] | topics [name string | error_code int16 | [error_message nullable_string]]
 */
import type { KafkaSink } from "./kafka-writer.js";

export interface TopicErrors {
  throttleTimeMs: number;
  topics: readonly { name: string; errorCode: number; errorMessage: string | null }[];
}

export function writeTopicErrors(w: KafkaSink, throttle: boolean, messages: boolean, res: TopicErrors): void {
  if (throttle) w.int32(res.throttleTimeMs);
  w.arrayCount(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name);
    w.int16(t.errorCode);
    if (messages) w.nullableString(t.errorMessage);
  }
}

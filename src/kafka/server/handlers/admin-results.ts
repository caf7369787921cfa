/**
 * What the admin handlers (CreateTopics, DeleteTopics, CreatePartitions) share: each topic is
 * handled on its own, in request order, and answered with its error code and message.
 */
import { KafkaErrorCode } from "../../protocol/error-codes.js";
import type { TopicErrors } from "../../protocol/topic-errors.js";
import { kafkaErrorCode, kafkaErrorMessage } from "../kafka-errors.js";

export type TopicResult = TopicErrors["topics"][number];

/** Runs `operation` for each name in turn; a failure is that topic's answer, not the request's. */
export async function eachTopic<T>(
  items: readonly T[],
  nameOf: (item: T) => string,
  operation: (item: T) => Promise<void>,
): Promise<TopicErrors> {
  const topics: TopicResult[] = [];
  for (const item of items) {
    const name = nameOf(item);
    try {
      await operation(item);
      topics.push({ name, errorCode: KafkaErrorCode.NONE, errorMessage: null });
    } catch (err) {
      topics.push({ name, errorCode: kafkaErrorCode(err), errorMessage: kafkaErrorMessage(err) });
    }
  }
  return { throttleTimeMs: 0, topics };
}

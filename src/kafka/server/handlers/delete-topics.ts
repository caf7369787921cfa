/** DeleteTopics: each topic deleted in turn, with its data; an unknown one answers UNKNOWN_TOPIC_OR_PARTITION. */
import { decodeDeleteTopicsRequest, encodeDeleteTopicsResponse } from "../../protocol/delete-topics.js";
import type { KafkaHandler } from "../kafka-handler.js";
import { eachTopic } from "./admin-results.js";

export const deleteTopicsHandler: KafkaHandler = {
  doneWithFrame: true,
  async handle(ctx, h) {
    const req = decodeDeleteTopicsRequest(h);
    const result = await eachTopic(
      req.topicNames,
      (name) => name,
      (name) => ctx.broker.deleteTopic(name),
    );
    return encodeDeleteTopicsResponse(h.correlationId, h.apiVersion, result);
  },
};

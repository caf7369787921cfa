/** DeleteTopics: each topic deleted in turn, with its data; an unknown one answers UNKNOWN_TOPIC_OR_PARTITION. */

import { authorize } from "../../../server/authorize.js";
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
      async (name) => {
        authorize(ctx, "delete", "topic", name);
        await ctx.broker.deleteTopic(name);
      },
    );
    return encodeDeleteTopicsResponse(h.correlationId, h.apiVersion, result);
  },
};

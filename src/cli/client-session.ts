/**
 * Opens a client for one command and always closes it, whatever the command's outcome.
 */
import {
  Producer,
  type ProducerMessage,
  type ProducerOptions,
  type SendBatchResult,
} from "../client/producer.js";
import type { PartitionDescription } from "../protocol/describe-topic.js";

export interface SendBatchApi {
  sendBatch(topic: string, messages: readonly ProducerMessage[]): Promise<SendBatchResult>;
  readonly hasRoom: boolean;
  waitForRoom(): Promise<void>;
  close(): Promise<void>;
}

export function openProducer(broker: string, options: ProducerOptions): SendBatchApi {
  return new Producer({ brokers: [broker], clientId: "conch-cli" }, options);
}

export interface AdminApi {
  createTopic(name: string, partitions: number, configs: Record<string, string>): Promise<void>;
  deleteTopic(name: string): Promise<void>;
  listTopics(): Promise<string[]>;
  describeTopic(
    name: string,
  ): Promise<{ topic: string; partitions: PartitionDescription[]; configs: Record<string, string> }>;
  alterTopic(name: string, configs: Record<string, string>): Promise<void>;
}

export async function withAdmin<T>(broker: string, work: (admin: AdminApi) => Promise<T>): Promise<T> {
  void broker;
  void work;
  throw new Error("the client is not available in this build");
}

/**
 * Opens a client for one command and always closes it, whatever the command's outcome.
 */
import type { PartitionDescription } from "../protocol/describe-topic.js";

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

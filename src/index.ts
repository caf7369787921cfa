/**
 * The Conch package: the client SDK (producer, consumer, admin, embedded mode) and the typed errors
 * shared with the broker. The broker and server load only when embedded mode is used.
 */
export {
  Admin,
  type AdminCallOptions,
  type CreateTopicOptions,
  type OffsetLookup,
  type QuarantinedRangeInfo,
  requireFigures,
  type TopicConfigs,
  type TopicDescription,
} from "./client/admin.js";
export {
  Consumer,
  type ConsumerBatch,
  type ConsumerMessage,
  type ConsumerOptions,
  type IterateOptions,
  type PartitionAssignment,
  type PartitionPosition,
  type RecordHeader,
  type ResetPolicy,
  type StartPosition,
  type TopicPartition,
  type WaitOptions,
} from "./client/consumer.js";
export { BatchCursor } from "./client/consumer-batch.js";
export { CorruptBatchError } from "./client/corrupt-batch-error.js";
export {
  type CommittedOffset,
  GroupAdmin,
  type GroupInfo,
  type GroupKindName,
  type GroupMemberInfo,
  type GroupPartitionDescription,
  type GroupStateName,
  type GroupSummary,
  type ResetPosition,
} from "./client/group-admin.js";
export {
  GroupConsumer,
  type GroupConsumerEvents,
  type GroupConsumerOptions,
  type GroupStrategy,
  type OffsetResetEvent,
  type RebalanceEvent,
} from "./client/group-consumer.js";
export type { ClientOptions } from "./client/options.js";
export { murmur2, partitionForKey } from "./client/partitioner.js";
export {
  type AcksSetting,
  Producer,
  type ProducerMessage,
  type ProducerOptions,
  type RecordHeaders,
  type RecordMetadata,
  type SendBatchResult,
} from "./client/producer.js";
export type { ClientSaslOptions, ClientTlsOptions } from "./client/security-options.js";
export { Conch, createClient } from "./embedded/conch.js";
export { type EmbeddedBroker, type EmbeddedOptions, startEmbeddedBroker } from "./embedded/embedded.js";
export { CODEC_NAMES, type CodecName } from "./format/codecs/index.js";
export { ConchError, ErrorCode, type ErrorCodeName, errorName, isRetriable } from "./format/errors.js";
export { UNKNOWN_OFFSET } from "./protocol/describe-topic.js";

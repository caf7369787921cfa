export * from "./broker.js";
export * from "./broker-config.js";
export * from "./broker-settings.js";
export * from "./group-coordinator.js";
export { OFFSETS_TOPIC } from "./offset-store.js";
export * from "./topic.js";
export * from "./topic-config.js";
export { MAX_PARTITIONS, type TopicMeta } from "./topic-store.js";

/**
 * The JSON values stored under the metadata keys (metadata-keys.ts), and their strict parsers:
 * a value that does not parse is refused (the cache logs and skips it), so a hand-edited or
 * foreign key cannot put a malformed role into a broker.
 */
import type { BrokerEndpoint, PartitionRole } from "./roles.js";

export interface BrokerRecord extends BrokerEndpoint {
  /** The Kafka listener's port, 0 when it is off. */
  readonly kafkaPort: number;
  /** The host Kafka clients are told to connect to. */
  readonly kafkaHost: string;
  /**
   * Set by the broker when it begins a controlled shutdown: the controller moves its leaderships
   * to other in-sync replicas and takes it out of the ISRs before it goes.
   */
  readonly shuttingDown?: boolean;
}

export interface TopicRecord {
  /** A uuid, so that a topic deleted and created again under its name is a different topic. */
  readonly id: string;
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly configs: Readonly<Record<string, string>>;
  /** The replicas of each partition, preferred leader first. */
  readonly assignment: readonly (readonly number[])[];
}

export interface PartitionRecord extends PartitionRole {
  /** The epoch of the controller that last elected its leader. */
  readonly controllerEpoch: number;
  /**
   * While a reassignment runs: the replicas the partition moves to. `replicas` is then the old
   * and the new together, and the old ones go once every new one is in the ISR.
   */
  readonly targetReplicas?: readonly number[];
}

const MAX_BROKER_ID = 2 ** 31 - 1;

type Json = Record<string, unknown>;

function object(text: string): Json {
  const v: unknown = JSON.parse(text);
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not a JSON object");
  return v as Json;
}

function int(o: Json, field: string, min: number, max: number): number {
  const v = o[field];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new Error(`${field}: expected an integer from ${min} to ${max}`);
  }
  return v;
}

function str(o: Json, field: string): string {
  const v = o[field];
  if (typeof v !== "string") throw new Error(`${field}: expected a string`);
  return v;
}

function brokerIds(o: Json, field: string): number[] {
  const v = o[field];
  if (!Array.isArray(v) || v.length > 1000) throw new Error(`${field}: expected an array of broker ids`);
  for (const id of v) {
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0 || id > MAX_BROKER_ID) {
      throw new Error(`${field}: expected an array of broker ids`);
    }
  }
  return v as number[];
}

export function parseBrokerRecord(id: number, text: string): BrokerRecord {
  const o = object(text);
  return {
    id,
    host: str(o, "host"),
    port: int(o, "port", 1, 65535),
    kafkaHost: str(o, "kafkaHost"),
    kafkaPort: int(o, "kafkaPort", 0, 65535),
    ...(o.shuttingDown === true ? { shuttingDown: true } : {}),
  };
}

export function encodeBrokerRecord(r: BrokerRecord): string {
  return JSON.stringify({
    host: r.host,
    port: r.port,
    kafkaHost: r.kafkaHost,
    kafkaPort: r.kafkaPort,
    ...(r.shuttingDown === true ? { shuttingDown: true } : {}),
  });
}

export function parseControllerRecord(text: string): number {
  return int(object(text), "brokerId", 0, MAX_BROKER_ID);
}

export function encodeControllerRecord(brokerId: number): string {
  return JSON.stringify({ brokerId });
}

export function parseTopicRecord(name: string, text: string): TopicRecord {
  const o = object(text);
  const partitions = int(o, "partitions", 1, 1_000_000);
  const replicationFactor = int(o, "replicationFactor", 1, 1000);
  const configs = o.configs;
  if (typeof configs !== "object" || configs === null || Array.isArray(configs)) {
    throw new Error("configs: expected an object");
  }
  for (const v of Object.values(configs)) {
    if (typeof v !== "string") throw new Error("configs: expected string values");
  }
  const assignment = o.assignment;
  if (!Array.isArray(assignment) || assignment.length !== partitions) {
    throw new Error("assignment: expected one replica list per partition");
  }
  // A reassignment may change a partition's replica count: each list needs one distinct replica at least.
  const lists = assignment.map((a, p) => {
    const replicas = brokerIds({ a }, "a");
    if (replicas.length === 0 || new Set(replicas).size !== replicas.length)
      throw new Error(`assignment ${p}: expected distinct replicas, one at least`);
    return replicas;
  });
  return {
    id: str(o, "id"),
    name,
    partitions,
    replicationFactor,
    configs: configs as Record<string, string>,
    assignment: lists,
  };
}

export function encodeTopicRecord(t: TopicRecord): string {
  return JSON.stringify({
    id: t.id,
    partitions: t.partitions,
    replicationFactor: t.replicationFactor,
    configs: t.configs,
    assignment: t.assignment,
  });
}

export function parsePartitionRecord(topic: string, partition: number, text: string): PartitionRecord {
  const o = object(text);
  return {
    topic,
    partition,
    leaderId: int(o, "leader", -1, MAX_BROKER_ID),
    leaderEpoch: int(o, "leaderEpoch", 0, 2 ** 31 - 1),
    replicas: brokerIds(o, "replicas"),
    isr: brokerIds(o, "isr"),
    controllerEpoch: int(o, "controllerEpoch", 0, Number.MAX_SAFE_INTEGER),
    ...(o.targetReplicas === undefined ? {} : { targetReplicas: brokerIds(o, "targetReplicas") }),
  };
}

export function encodePartitionRecord(r: Omit<PartitionRecord, "topic" | "partition">): string {
  return JSON.stringify({
    leader: r.leaderId,
    leaderEpoch: r.leaderEpoch,
    replicas: r.replicas,
    isr: r.isr,
    controllerEpoch: r.controllerEpoch,
    ...(r.targetReplicas === undefined ? {} : { targetReplicas: r.targetReplicas }),
  });
}

/**
 * What `listGroups` and `describeGroup` tell of a group, for both kinds: members and what each
 * owns, and per partition its owner, committed offset and lag.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { ConsumerGroup } from "./group.js";
import { decodeConsumerAssignment } from "./group-consumer-protocol.js";
import type { KafkaGroup, KafkaGroupStateName } from "./group-kafka.js";
import type { TopicPartitions } from "./group-member.js";
import type { OffsetStore } from "./offset-store.js";
import type { TopicDescription } from "./topic.js";

/** The states of both kinds; CompletingRebalance is a Kafka group's wait for its leader's assignment. */
export type GroupStateName = KafkaGroupStateName;

/**
 * native: Conch's own clients, the broker assigns. kafka: Kafka clients, the leader member assigns
 * (group-kafka.ts). A group is one kind or the other while it has members.
 */
export type GroupKind = "native" | "kafka";

export interface GroupListing {
  group: string;
  /** A group with only committed offsets is "native" unless a Kafka group is live under its name. */
  kind: GroupKind;
  state: GroupStateName;
  members: number;
  /** Kafka: the members' protocol type ("consumer"); "" for a native group. */
  protocolType: string;
}

export interface GroupMemberDescription {
  memberId: string;
  clientId: string;
  /**
   * Native: what the broker assigned. Kafka: the leader's assignment decoded when the protocol type
   * is "consumer" and the bytes are the standard consumer assignment; else empty.
   */
  assignment: TopicPartitions[];
  /** Kafka only (empty for native members): the member's metadata for the group's protocol. */
  metadata: Uint8Array;
  /** Kafka only: the leader's assignment for this member, as sent. */
  assignmentBytes: Uint8Array;
}

export interface GroupPartitionDescription {
  topic: string;
  partition: number;
  /** "" when no member owns it. */
  owner: string;
  /** -1: none committed. */
  committed: number;
  /** -1 while the partition is being recovered after a crash (Broker.recovered). */
  highWatermark: number;
  /** highWatermark - committed, or -1 when nothing is committed or the high watermark is not known. */
  lag: number;
}

export interface GroupDescription {
  group: string;
  kind: GroupKind;
  state: GroupStateName;
  generation: number;
  /** Native: the assignment strategy. Kafka: the protocol the members chose (e.g. "range"). */
  strategy: string;
  /** Kafka: the protocol type ("consumer"); "" for a native group. */
  protocolType: string;
  /** Kafka: the leader's member id; "" for a native group. */
  leader: string;
  members: GroupMemberDescription[];
  partitions: GroupPartitionDescription[];
}

const NO_BYTES = new Uint8Array(0);

/**
 * The topics a description of the group covers, sorted: those its members subscribe to or own
 * partitions of, and those it committed offsets for.
 */
export function groupTopics(
  name: string,
  g: ConsumerGroup | KafkaGroup | undefined,
  offsets: OffsetStore,
  members: readonly GroupMemberDescription[] = describeMembers(g),
): string[] {
  const topics = new Set<string>();
  if (g instanceof ConsumerGroup) for (const m of g.members()) for (const t of m.topics) topics.add(t);
  for (const m of members) for (const a of m.assignment) topics.add(a.topic);
  for (const c of offsets.groupOffsets(name)) topics.add(c.topic);
  return [...topics].sort();
}

/** The description of a group (undefined: one known only by its committed offsets). */
export function describe(
  name: string,
  g: ConsumerGroup | KafkaGroup | undefined,
  offsets: OffsetStore,
  host: { describeTopic(name: string): TopicDescription },
): GroupDescription {
  const members = describeMembers(g);
  const owners = new Map<string, string>();
  for (const m of members) {
    for (const a of m.assignment) {
      for (const p of a.partitions) owners.set(`${a.topic}:${p}`, m.memberId);
    }
  }
  const committed = offsets.groupOffsets(name);
  const partitions: GroupPartitionDescription[] = [];
  for (const topic of groupTopics(name, g, offsets, members)) {
    let described: TopicDescription | null = null;
    let unknown = false;
    try {
      described = host.describeTopic(topic);
    } catch (err) {
      // Deleted (or not created yet): only what was committed for it is left to show. Still being
      // recovered after a crash (TIMEOUT): its end is not known yet, nor the lag (-1).
      unknown = err instanceof ConchError && err.code === ErrorCode.TIMEOUT;
    }
    const rows =
      described?.partitions ??
      committed
        .filter((c) => c.topic === topic)
        .map((c) => ({ partition: c.partition, highWatermark: unknown ? -1 : 0 }));
    for (const p of rows) {
      const offset = offsets.get(name, topic, p.partition);
      partitions.push({
        topic,
        partition: p.partition,
        owner: owners.get(`${topic}:${p.partition}`) ?? "",
        committed: offset,
        highWatermark: p.highWatermark,
        lag: offset < 0 || p.highWatermark < 0 ? -1 : Math.max(0, p.highWatermark - offset),
      });
    }
  }
  const kafka = g !== undefined && !(g instanceof ConsumerGroup) ? g : null;
  return {
    group: name,
    kind: kafka !== null ? "kafka" : "native",
    state: g?.state ?? "Empty",
    generation: g?.generation ?? 0,
    strategy: kafka !== null ? kafka.protocol : g instanceof ConsumerGroup ? g.strategy : "",
    protocolType: kafka?.protocolType ?? "",
    leader: kafka?.leader ?? "",
    members,
    partitions,
  };
}

function describeMembers(g: ConsumerGroup | KafkaGroup | undefined): GroupMemberDescription[] {
  if (g === undefined) return [];
  if (g instanceof ConsumerGroup) {
    return g.members().map((m) => ({
      memberId: m.id,
      clientId: m.clientId,
      assignment: m.assignment(),
      metadata: NO_BYTES,
      assignmentBytes: NO_BYTES,
    }));
  }
  const consumer = g.protocolType === "consumer";
  return g.members().map((m) => ({
    memberId: m.id,
    clientId: m.clientId,
    assignment: consumer ? (decodeConsumerAssignment(m.assignment) ?? []) : [],
    metadata: m.metadataFor(g.protocol),
    assignmentBytes: m.assignment,
  }));
}

/**
 * The assignment strategies of consumer groups (docs/groups.md): who owns which partitions. Both give
 * every partition of every subscribed topic to exactly one member subscribed to that topic, and both
 * are deterministic (members ordered by id), so the same members and partition counts always give
 * the same assignment.
 *
 * - range: per topic, the partitions in contiguous runs, the first members taking one extra when the
 *   count does not divide evenly (6 partitions over 4 members: 0-1, 2-3, 4, 5).
 * - roundrobin: every (topic, partition) of all topics in turn, dealt to the members like cards,
 *   skipping members not subscribed to the topic; spreads better when members read several topics.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export const ASSIGNMENT_STRATEGIES = ["range", "roundrobin"] as const;
export type AssignmentStrategy = (typeof ASSIGNMENT_STRATEGIES)[number];

export interface Subscriber {
  readonly id: string;
  /** Sorted, no duplicates. */
  readonly topics: readonly string[];
}

/** Member id -> topic -> partitions (ascending). Every subscriber has an entry, maybe empty. */
export type Assignment = Map<string, Map<string, number[]>>;

export function parseStrategy(name: string): AssignmentStrategy {
  if ((ASSIGNMENT_STRATEGIES as readonly string[]).includes(name)) return name as AssignmentStrategy;
  throw new ConchError(
    ErrorCode.INVALID_REQUEST,
    `unknown assignment strategy "${name}" (known: ${ASSIGNMENT_STRATEGIES.join(", ")})`,
  );
}

/** `partitionCount` answers 0 for a topic that does not exist (yet). */
export function assignPartitions(
  strategy: AssignmentStrategy,
  subscribers: readonly Subscriber[],
  partitionCount: (topic: string) => number,
): Assignment {
  const members = [...subscribers].sort((a, b) => compare(a.id, b.id));
  const out: Assignment = new Map();
  for (const m of members) out.set(m.id, new Map());
  const topics = [...new Set(members.flatMap((m) => m.topics))].sort(compare);
  if (strategy === "range") assignRange(members, topics, partitionCount, out);
  else assignRoundRobin(members, topics, partitionCount, out);
  return out;
}

function assignRange(
  members: readonly Subscriber[],
  topics: readonly string[],
  partitionCount: (topic: string) => number,
  out: Assignment,
): void {
  for (const topic of topics) {
    const n = partitionCount(topic);
    const subscribed = members.filter((m) => m.topics.includes(topic));
    const each = Math.floor(n / subscribed.length);
    const extra = n % subscribed.length;
    let next = 0;
    for (let i = 0; i < subscribed.length; i++) {
      const count = each + (i < extra ? 1 : 0);
      if (count === 0) continue;
      const partitions = Array.from({ length: count }, (_, j) => next + j);
      out.get(subscribed[i]!.id)!.set(topic, partitions);
      next += count;
    }
  }
}

function assignRoundRobin(
  members: readonly Subscriber[],
  topics: readonly string[],
  partitionCount: (topic: string) => number,
  out: Assignment,
): void {
  let turn = 0;
  for (const topic of topics) {
    const n = partitionCount(topic);
    for (let p = 0; p < n; p++) {
      // The member whose turn it is, or the next one subscribed to this topic (there is at least one).
      for (let tries = 0; tries < members.length; tries++) {
        const m = members[turn % members.length]!;
        turn++;
        if (!m.topics.includes(topic)) continue;
        const owned = out.get(m.id)!;
        const list = owned.get(topic);
        if (list === undefined) owned.set(topic, [p]);
        else list.push(p);
        break;
      }
    }
  }
}

/** Plain code-unit order, the same everywhere (localeCompare is not). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

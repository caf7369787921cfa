/**
 * A real cluster for the consumer-group tests: one etcd, three `conch broker` processes, and the
 * broker that coordinates a group as the cluster says (the leader of its `__consumer_offsets`
 * partition, read with native Metadata from a live broker).
 */
import assert from "node:assert/strict";
import { groupPartition } from "../../src/broker/group-partition.js";
import { OFFSETS_TOPIC } from "../../src/broker/offset-store.js";
import * as p from "../../src/protocol/index.js";
import { TestClient } from "../server/helpers.js";
import { BrokerProcess } from "./broker-process.js";
import { EtcdCluster } from "./etcd-harness.js";

export interface GroupCluster {
  readonly etcd: EtcdCluster;
  readonly brokers: BrokerProcess[];
  /** The brokers not killed. */
  live(): BrokerProcess[];
  /** The coordinator of `group` as a live broker's metadata has it; -1 while none. */
  coordinatorId(group: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startGroupCluster(clusterId: string): Promise<GroupCluster> {
  const etcd = await EtcdCluster.start(1);
  const brokers: BrokerProcess[] = [];
  try {
    for (let id = 1; id <= 3; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId }));
  } catch (err) {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd.stop();
    throw err;
  }
  const live = (): BrokerProcess[] =>
    brokers.filter((b) => b.child.exitCode === null && b.child.signalCode === null);
  return {
    etcd,
    brokers,
    live,
    async coordinatorId(group: string): Promise<number> {
      const b = live()[0];
      if (b === undefined) return -1;
      const c = await TestClient.connect(b.port);
      try {
        await c.handshake();
        const m = p.decodeMetadataResponse(
          await c.call((id) => p.encodeMetadataRequest(id, [OFFSETS_TOPIC])),
        );
        const parts = m.topics[0]?.partitions ?? [];
        if (parts.length === 0) return -1;
        const leader = parts[groupPartition(group, parts.length)]?.leaderId ?? -1;
        return m.brokers.some((x) => x.id === leader) ? leader : -1;
      } finally {
        c.destroy();
      }
    },
    async stop() {
      await Promise.all(brokers.map((b) => b.remove()));
      await etcd.stop();
    },
  };
}

/** Polls `probe` every 100 ms until it returns a value that is not undefined; rejects at the deadline. */
export async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A group of two members under test, whatever its client. */
export interface GroupUnderTest {
  readonly group: string;
  readonly partitions: number;
  /** Whether the two members share the partitions (each has some). */
  shared(): boolean;
  /** Every value the members processed, duplicates kept. */
  seen(): string[];
  /** Produces five values to each partition, named after `round`; resolves with them once acknowledged. */
  produce(round: string): Promise<string[]>;
  /** The group's committed offsets of the topic, by partition (throws while there is no coordinator). */
  committed(): Promise<number[]>;
  /** Whether every member has joined again since `t` (performance.now()); undefined: not observable. */
  rejoinedSince?(t: number): number | undefined;
}

const PER_ROUND = 5;

/**
 * The scenario of the cluster group tests: the members share the partitions, consume the first
 * round and commit it; `between` runs (the CLI, say); the coordinator is SIGKILLed; a new leader of
 * the group's offsets partition answers with every commit (none goes back); the group consumes
 * and commits the second round through it, and delivers nothing of the first round again.
 * Resolves with where the time went after the kill.
 */
export async function coordinatorFailover(
  cluster: GroupCluster,
  g: GroupUnderTest,
  between: () => Promise<void> = async () => {},
): Promise<string> {
  const allCommitted = (n: number) => async () => {
    const c = await g.committed().catch(() => []);
    return c.length === g.partitions && c.every((o) => o === n) ? true : undefined;
  };
  const seenAll = (values: string[]) => () => {
    const seen = new Set(g.seen());
    return values.every((v) => seen.has(v)) ? true : undefined;
  };
  await until("the two members to share the partitions", 60_000, () => (g.shared() ? true : undefined));
  const first = await g.produce("one");
  await until("the members to process the first round", 60_000, seenAll(first));
  await until("the group to commit the first round", 30_000, allCommitted(PER_ROUND));
  await between();

  const coordinatorId = await cluster.coordinatorId(g.group);
  assert.ok(coordinatorId > 0, "the group's offsets partition has a leader");
  const firstSeen = g.seen().length;
  const before = await g.committed();
  await cluster.brokers.find((b) => b.brokerId === coordinatorId)!.kill();
  const killedAt = performance.now();
  const since = (): number => Math.round(performance.now() - killedAt);
  const moved = await until("another broker to lead the group's offsets partition", 30_000, async () => {
    const id = await cluster.coordinatorId(g.group).catch(() => -1);
    return id > 0 && id !== coordinatorId ? id : undefined;
  });
  const after = await until("the new coordinator to answer with the commits", 30_000, () =>
    g.committed().catch(() => undefined),
  );
  const answeredMs = since();
  for (let p = 0; p < g.partitions; p++) {
    assert.ok(
      (after[p] ?? -1) >= before[p]!,
      `partition ${p}: committed ${after[p]} after, ${before[p]} before`,
    );
  }
  let rejoined = "";
  if (g.rejoinedSince !== undefined) {
    const at = await until("the members to join the new coordinator", 60_000, () =>
      g.rejoinedSince!(killedAt),
    );
    rejoined = `, group joined again after ${Math.round(at - killedAt)} ms`;
  }
  const second = await g.produce("two");
  const producedMs = since();
  await until("the members to process the second round", 60_000, seenAll(second));
  await until("the group to commit the second round", 30_000, allCommitted(2 * PER_ROUND));
  const firstAgain = g.seen().filter((v) => v.startsWith("one-"));
  assert.equal(firstAgain.length, firstSeen, "nothing of the committed first round was delivered again");
  return (
    `coordinator ${coordinatorId} -> ${moved}: commits answered after ${answeredMs} ms${rejoined}, ` +
    `second round produced after ${producedMs} ms, consumed and committed after ${since()} ms`
  );
}

/** What the scenario reads of a member: the values it processed and its partition count. */
export interface MemberView {
  readonly seen: readonly string[];
  readonly assigned: number;
}

/** `shared` and `seen` of GroupUnderTest over two members. */
export function twoMembers(
  members: readonly MemberView[],
  partitions: number,
): Pick<GroupUnderTest, "shared" | "seen"> {
  return {
    shared: () => {
      const [a, b] = members;
      return (
        a !== undefined &&
        b !== undefined &&
        a.assigned > 0 &&
        b.assigned > 0 &&
        a.assigned + b.assigned === partitions
      );
    },
    seen: () => members.flatMap((m) => m.seen),
  };
}

/** The values of a round: PER_ROUND to each partition, `<round>-p<partition>-<i>`. */
export function roundValues(round: string, partitions: number): { value: string; partition: number }[] {
  const out: { value: string; partition: number }[] = [];
  for (let p = 0; p < partitions; p++)
    for (let i = 0; i < PER_ROUND; i++) out.push({ value: `${round}-p${p}-${i}`, partition: p });
  return out;
}

import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { ClusterNode } from "../../src/cluster/cluster-node.js";
import { Controller } from "../../src/cluster/controller.js";
import { MetadataCache } from "../../src/cluster/metadata-cache.js";
import { encodeTopicRecord, type PartitionRecord } from "../../src/cluster/metadata-records.js";
import { ClusterTopics } from "../../src/cluster/metadata-topics.js";
import { type ConchError, ErrorCode } from "../../src/format/errors.js";
import { etcdForSuite, skipWithoutEtcd } from "./etcd-harness.js";
import { ControlledStore, RecordingReplicas } from "./meta-fakes.js";

const TTL = 2;
const quiet = { info: () => {}, warn: () => {} };

interface Member {
  node: ClusterNode;
  replicas: RecordingReplicas;
  store: ControlledStore;
  topics: ClusterTopics;
}

describe("ClusterNode and the controller against a real etcd", { skip: skipWithoutEtcd }, () => {
  const suite = etcdForSuite(before, after);
  let cluster = 0;
  let members: Member[] = [];
  afterEach(async () => {
    await Promise.all(members.map((m) => m.node.close()));
    members = [];
  });

  /** Starts brokers 1..n of a fresh cluster id, one after another (broker 1 is the controller). */
  async function startCluster(n: number): Promise<Member[]> {
    const clusterId = `c${++cluster}`;
    for (let id = 1; id <= n; id++) members.push(await startMember(clusterId, id));
    return members;
  }

  async function startMember(clusterId: string, id: number, silentAtStart = false): Promise<Member> {
    const replicas = new RecordingReplicas();
    const controlled = new ControlledStore(suite.store);
    controlled.silence(silentAtStart);
    const node = new ClusterNode({
      clusterId,
      self: { id, host: "127.0.0.1", port: 7000 + id, kafkaHost: "127.0.0.1", kafkaPort: 9000 + id },
      store: controlled,
      replicas,
      leaseTtlSeconds: TTL,
      log: quiet,
      registerWaitMs: 0,
    });
    await node.start();
    const topics = new ClusterTopics(node, { defaultReplicationFactor: 3, readyTimeoutMs: 5000 });
    return { node, replicas, store: controlled, topics };
  }

  async function controllerOf(m: Member): Promise<Controller> {
    assert.ok(await waitUntil(() => m.node.controller !== null, 5_000), "no controller");
    return m.node.controller as Controller;
  }

  test("brokers register, and exactly one is the controller with epoch = the key's create revision", async () => {
    const [a, b, c] = await startCluster(3);
    assert.ok(a && b && c);
    const ctl = await controllerOf(a);
    assert.equal(b.node.controller, null);
    assert.equal(c.node.controller, null);
    const key = await suite.store.get(a.node.keys.controller);
    assert.equal(key?.createRevision, ctl.epoch);
    assert.deepEqual(c.node.cache.controller, { brokerId: 1, epoch: ctl.epoch });
    assert.deepEqual([...c.node.cache.brokers.keys()].sort(), [1, 2, 3]);
    assert.deepEqual(c.node.endpoint(2), {
      id: 2,
      host: "127.0.0.1",
      port: 7002,
      kafkaHost: "127.0.0.1",
      kafkaPort: 9002,
    });
  });

  test("a second broker with a live broker's id is refused", async () => {
    const [a] = await startCluster(1);
    assert.ok(a);
    await assert.rejects(
      startMember(`c${cluster}`, 1),
      (err: ConchError) => err.code === ErrorCode.INVALID_CONFIG && /already registered/.test(err.message),
    );
  });

  test("a topic gets its replicas spread over the brokers and a record per partition; every replica gets its role", async () => {
    const [a, b, c] = await startCluster(3);
    assert.ok(a && b && c);
    await controllerOf(a);
    // Created through a broker that is not the controller.
    await c.topics.createTopic("orders", 6, { "min.insync.replicas": "2" }, 3);
    const records = [...(c.node.cache.partitions.get("orders")?.values() ?? [])].map((v) => v.value);
    assert.equal(records.length, 6);
    const leaders = new Map<number, number>();
    for (const r of records) {
      assert.equal(r.replicas.length, 3);
      assert.equal(new Set(r.replicas).size, 3);
      assert.equal(r.leaderId, r.replicas[0]);
      assert.equal(r.leaderEpoch, 0);
      assert.deepEqual(r.isr, r.replicas);
      leaders.set(r.leaderId, (leaders.get(r.leaderId) ?? 0) + 1);
    }
    assert.deepEqual([...leaders.values()], [2, 2, 2], "leaders spread evenly");
    for (const m of [a, b, c]) {
      await waitUntil(() => m.replicas.roles.filter((r) => r.topic === "orders").length >= 6, 5000);
      for (let p = 0; p < 6; p++) assert.equal(m.replicas.last("orders", p)?.leaderEpoch, 0);
    }
    await assert.rejects(
      c.topics.createTopic("orders", 1, {}, 1),
      (e: ConchError) => e.code === ErrorCode.TOPIC_ALREADY_EXISTS,
    );
    await assert.rejects(
      c.topics.createTopic("wide", 1, {}, 4),
      (e: ConchError) => e.code === ErrorCode.INVALID_REPLICATION_FACTOR,
    );
  });

  test("when a leader's broker dies, each partition it led goes to the first live ISR member with epoch + 1", async () => {
    const [a, b, c] = await startCluster(3);
    assert.ok(a && b && c);
    await controllerOf(a);
    await a.topics.createTopic("pay", 3, {}, 3);
    const led = [...(a.node.cache.partitions.get("pay")?.values() ?? [])].filter(
      (v) => v.value.leaderId === 3,
    );
    assert.ok(led.length >= 1);
    await c.store.crash();
    const moved = await a.node.cache.waitFor(
      () => led.every((v) => a.node.cache.partition("pay", v.value.partition)?.value.leaderId !== 3),
      TTL * 1000 + 3000,
    );
    assert.ok(moved, "leaders moved after the lease expired");
    for (const { value: before } of led) {
      const now: PartitionRecord | undefined = a.node.cache.partition("pay", before.partition)?.value;
      const expected = before.isr.filter((id) => id !== 3);
      assert.equal(now?.leaderId, expected[0]);
      assert.equal(now?.leaderEpoch, before.leaderEpoch + 1);
      assert.deepEqual(now?.isr, expected);
      assert.ok((now?.controllerEpoch ?? 0) > 0);
      // The new leader was told.
      const newLeader: Member | undefined = [a, b].find((m) => m.node.brokerId === expected[0]);
      await waitUntil(
        () => newLeader?.replicas.last("pay", before.partition)?.leaderEpoch === before.leaderEpoch + 1,
        2000,
      );
      assert.equal(newLeader?.replicas.last("pay", before.partition)?.leaderId, expected[0]);
    }
  });

  test("when a follower's broker dies, it leaves the ISR of each partition it follows; leader and epoch stay", async () => {
    const [a, b, c] = await startCluster(3);
    assert.ok(a && b && c);
    await controllerOf(a);
    await a.topics.createTopic("fol", 3, {}, 3);
    const followed = [...(a.node.cache.partitions.get("fol")?.values() ?? [])].filter(
      (v) => v.value.leaderId !== 3,
    );
    assert.ok(followed.length >= 1);
    await c.store.crash();
    // Without this, acks=all waits on the dead follower until its leader's lag check (10 s).
    const shrunk = await a.node.cache.waitFor(
      () => followed.every((v) => !a.node.cache.partition("fol", v.value.partition)?.value.isr.includes(3)),
      TTL * 1000 + 3000,
    );
    assert.ok(shrunk, "the dead follower left the ISRs after its lease expired");
    for (const { value: before } of followed) {
      const now: PartitionRecord | undefined = a.node.cache.partition("fol", before.partition)?.value;
      assert.equal(now?.leaderId, before.leaderId);
      assert.equal(now?.leaderEpoch, before.leaderEpoch);
      assert.deepEqual(
        now?.isr,
        before.isr.filter((id) => id !== 3),
      );
    }
  });

  test("a partition with no live ISR member goes offline, and its ISR member's return brings it back", async () => {
    const [a, b] = await startCluster(2);
    assert.ok(a && b);
    await controllerOf(a);
    await a.topics.createTopic("solo", 2, {}, 1);
    const onB = [...(a.node.cache.partitions.get("solo")?.values() ?? [])].find(
      (v) => v.value.leaderId === 2,
    );
    assert.ok(onB, "one partition is led by broker 2");
    const p = onB.value.partition;
    await b.store.crash();
    await b.node.close();
    members = members.filter((m) => m !== b);
    assert.ok(
      await a.node.cache.waitFor(
        () => a.node.cache.partition("solo", p)?.value.leaderId === -1,
        TTL * 1000 + 3000,
      ),
    );
    const offline = a.node.cache.partition("solo", p)?.value;
    assert.equal(offline?.leaderEpoch, 1);
    assert.deepEqual(offline?.isr, [2], "the last ISR is kept: only it may lead again");
    const back = await startMember(`c${cluster}`, 2);
    members.push(back);
    assert.ok(
      await a.node.cache.waitFor(() => a.node.cache.partition("solo", p)?.value.leaderId === 2, 5000),
    );
    assert.equal(a.node.cache.partition("solo", p)?.value.leaderEpoch, 2);
  });

  test("when the controller dies another takes over with a higher epoch, and the old epoch's writes are refused", async () => {
    const [a, b, c] = await startCluster(3);
    assert.ok(a && b && c);
    const old = await controllerOf(a);
    await b.topics.createTopic("t", 3, {}, 2);
    await a.store.crash();
    const next = await b.node.cache.waitFor(
      () => (b.node.cache.controller?.epoch ?? 0) > old.epoch,
      TTL * 1000 + 3000,
    );
    assert.ok(next, "a new controller was elected");
    const winner = [b, c].find((m) => m.node.brokerId === b.node.cache.controller?.brokerId);
    assert.ok(winner);
    const ctl = await controllerOf(winner);
    assert.ok(ctl.epoch > old.epoch);
    // Partitions broker 1 led moved too (the new controller's first pass).
    assert.ok(
      await b.node.cache.waitFor(
        () => [...(b.node.cache.partitions.get("t")?.values() ?? [])].every((v) => v.value.leaderId !== 1),
        5000,
      ),
    );
    // A deposed controller with work to do (a topic without partition records) writes nothing.
    const view = new MetadataCache(b.node.keys, () => {});
    const topic = { id: "x", name: "z", partitions: 1, replicationFactor: 1, configs: {}, assignment: [[2]] };
    view.load(
      [{ key: b.node.keys.topic("z"), value: encodeTopicRecord(topic), createRevision: 1, modRevision: 1 }],
      1,
    );
    const zombie = new Controller(old.epoch, suite.store, view, b.node.keys, quiet);
    zombie.reconcile();
    await zombie.deposed;
    assert.equal(zombie.stopped, true);
    assert.equal(await suite.store.get(b.node.keys.partition("z", 0)), undefined);
  });

  test("the leader's ISR change is a CAS guarded by its epoch; a stale epoch is refused", async () => {
    const [a, b] = await startCluster(2);
    assert.ok(a && b);
    await controllerOf(a);
    await a.topics.createTopic("isr", 1, {}, 2);
    const rec = a.node.cache.partition("isr", 0)?.value;
    assert.ok(rec);
    const leader = rec.leaderId === 1 ? a : b;
    const follower = rec.leaderId === 1 ? b : a;
    assert.equal(
      await follower.node.proposeIsr("isr", 0, rec.leaderEpoch, [follower.node.brokerId]),
      false,
      "only the leader proposes",
    );
    assert.equal(
      await leader.node.proposeIsr("isr", 0, rec.leaderEpoch + 1, [leader.node.brokerId]),
      false,
      "a wrong epoch is refused",
    );
    await assert.rejects(
      leader.node.proposeIsr("isr", 0, rec.leaderEpoch, [leader.node.brokerId, 9]),
      RangeError,
    );
    await assert.rejects(
      leader.node.proposeIsr("isr", 0, rec.leaderEpoch, [follower.node.brokerId]),
      RangeError,
    );
    assert.equal(await leader.node.proposeIsr("isr", 0, rec.leaderEpoch, [leader.node.brokerId]), true);
    assert.ok(await waitUntil(() => follower.replicas.last("isr", 0)?.isr.length === 1, 2000));
    assert.deepEqual(
      follower.replicas.last("isr", 0)?.isr,
      [leader.node.brokerId],
      "the new ISR reaches every replica as a role",
    );
  });

  test("a broker that hears no keepalive answer fences itself by its own deadline, and unfences on the next", async () => {
    const [a] = await startCluster(1);
    assert.ok(a);
    const silencedAt = performance.now();
    a.store.silence(true);
    assert.ok(await a.node.cache.waitFor(() => false, 0).then(() => true));
    const fenced = await waitUntil(() => a.replicas.fences > 0, TTL * 1000 + 1000);
    assert.ok(fenced, "fenced within the TTL");
    assert.ok(performance.now() - silencedAt <= TTL * 1000 + 200);
    assert.equal(a.node.fenced, true);
    a.store.silence(false);
    assert.ok(await waitUntil(() => !a.node.fenced, TTL * 1000), "the next keepalive answer lifts the fence");
  });

  test("a broker fenced when it starts (no keepalive answered yet) runs for controller once the fence lifts", async () => {
    // A loaded machine: the grant's deadline passed before registration finished. The campaign
    // at start is skipped while fenced; it used to be skipped for good (no broker was controller).
    const a = await startMember(`c${++cluster}`, 1, true);
    members.push(a);
    assert.equal(a.node.fenced, true);
    assert.equal(a.node.controller, null);
    a.store.silence(false);
    assert.ok(await waitUntil(() => !a.node.fenced, TTL * 1000), "the next keepalive answer lifts the fence");
    await controllerOf(a);
  });

  test("a controller whose fence lifts within its lease acts again in the same epoch", async () => {
    const [a, b] = await startCluster(2);
    assert.ok(a && b);
    const first = await controllerOf(a);
    a.store.silence(true);
    assert.ok(await waitUntil(() => a.node.fenced, TTL * 1000 + 1000), "fenced at the deadline");
    assert.equal(a.node.controller, null, "a fenced broker decides nothing");
    a.store.silence(false);
    // Its lease lived on in etcd, so the controller key is still its own and no broker runs for
    // it: unless it resumes, no partition ever gets a record (or a new leader) again.
    const again = await controllerOf(a);
    assert.equal(again.epoch, first.epoch);
    assert.equal(b.node.controller, null);
    await a.topics.createTopic("after-fence", 2, {}, 2);
    assert.ok(await b.node.cache.waitFor(() => b.node.cache.partitions.get("after-fence")?.size === 2, 5000));
  });

  test("a broker whose keepalive answers stop while etcd keeps its lease asks etcd and leads on: no fence, no new lease", async () => {
    const [a] = await startCluster(1);
    assert.ok(a);
    const first = await controllerOf(a);
    const before = await suite.store.get(a.node.keys.broker(1));
    a.store.muteKeepalives(true);
    // Three TTLs: without asking etcd the broker fenced itself at its deadline, a TTL after the
    // last answer, and counted the lease lost a TTL later (a new lease: a broker death to the controller).
    const fenced = await waitUntil(() => a.node.fenced, 3 * TTL * 1000);
    a.store.muteKeepalives(false);
    assert.equal(fenced, false, "fenced itself while etcd said its lease lived");
    assert.equal(a.node.controller?.epoch, first.epoch, "the same controller epoch");
    const after = await suite.store.get(a.node.keys.broker(1));
    assert.equal(after?.createRevision, before?.createRevision, "the same registration");
  });

  test("a broker whose lease expired without a 'lost' event joins again under a new lease", async () => {
    const [a] = await startCluster(1);
    assert.ok(a);
    const first = await controllerOf(a);
    const before = await suite.store.get(a.node.keys.broker(1));
    a.store.dropLeases();
    assert.ok(await waitUntil(() => a.node.fenced, TTL * 1000 + 1000), "fenced at the deadline");
    // Back once the old lease has expired: registered again, controller again (a new epoch).
    assert.ok(
      await waitUntil(
        () => !a.node.fenced && (a.node.controller?.epoch ?? 0) > first.epoch,
        3 * TTL * 1000 + 3000,
      ),
    );
    const after = await suite.store.get(a.node.keys.broker(1));
    assert.ok(after !== undefined && before !== undefined && after.createRevision > before.createRevision);
  });

  test("a broker whose registration again fails keeps trying until it is back", async () => {
    const [a] = await startCluster(1);
    assert.ok(a);
    // Not the controller: this is about membership (a loaded machine can delay the election).
    assert.ok(await waitUntil(() => !a.node.fenced, 10_000), "registered");
    const before = await suite.store.get(a.node.keys.broker(1));
    a.store.failSessions(2);
    a.store.dropLeases();
    assert.ok(await waitUntil(() => a.node.fenced, TTL * 1000 + 1000), "fenced at the deadline");
    assert.ok(
      await waitUntil(() => !a.node.fenced, 3 * TTL * 1000 + 6000),
      "registered again after two refused lease grants",
    );
    const after = await suite.store.get(a.node.keys.broker(1));
    assert.ok(after !== undefined && before !== undefined && after.createRevision > before.createRevision);
  });
});

/** For a state change that has no event of its own (a timer inside the node). */
async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

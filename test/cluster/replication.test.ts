/**
 * Replication between in-process brokers with roles handed out by hand (the metadata side is a
 * stand-in, replica-cluster.ts): followers store the leader's batches byte for byte, acks "all"
 * waits for the ISR, a follower that stops fetching leaves the ISR, a follower whose log parted
 * from the new leader's truncates to the epoch boundary, a fenced leader acknowledges nothing (nor
 * one past its lease deadline whose fence has not run yet), and one whose fence lifts leads its
 * epoch again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Connection } from "../../src/client/connection.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { createClient } from "../../src/index.js";
import {
  decodeReplicaFetchResponse,
  encodeReplicaFetchRequest,
  NO_EPOCH,
  type ReplicaFetchResponse,
} from "../../src/protocol/replica-fetch.js";
import { makeBatch } from "../storage/helpers.js";
import { batchCrcs, role, startCluster, until } from "./replica-cluster.js";

const TOPIC = "replicated";

function codeOf(err: unknown): number {
  return err instanceof ConchError ? err.code : -1;
}

test("followers store the leader's batches byte for byte, and acks all answers once they have them", async (t) => {
  const cluster = await startCluster(t, [1, 2, 3], TOPIC);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2, 3]));
  const leader = cluster.node(1).broker;
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const ack = await leader.produce(TOPIC, 0, makeBatch(`m${i}`, 1 + (i % 5)), "all");
    last = ack.lastOffset;
    // Answered only once every in-sync replica stored it: look at once, before anything else runs.
    for (const id of [2, 3]) {
      const leo = cluster.node(id).broker.partition(TOPIC, 0).logEndOffset;
      assert.ok(leo > last, `broker ${id} has ${leo}, the ack said ${last}`);
    }
  }
  const log = leader.partition(TOPIC, 0);
  assert.equal(log.highWatermark, last + 1);
  const expected = await batchCrcs(log, log.highWatermark);
  assert.equal(expected.length, 40);
  for (const id of [2, 3]) {
    assert.deepEqual(
      await batchCrcs(cluster.node(id).broker.partition(TOPIC, 0), log.highWatermark),
      expected,
    );
    assert.deepEqual(cluster.node(id).broker.partition(TOPIC, 0).epochs.entries, [
      { epoch: 1, startOffset: 0 },
    ]);
  }
  // Followers refuse clients: they are not the leader.
  await assert.rejects(cluster.node(2).broker.produce(TOPIC, 0, makeBatch("x"), "leader"), (err) => {
    return codeOf(err) === ErrorCode.NOT_LEADER;
  });
  await assert.rejects(
    cluster
      .node(3)
      .broker.fetch({ topic: TOPIC, partition: 0, offset: 0, maxBytes: 1000, maxWaitMs: 0, minBytes: 0 }),
    (err) => codeOf(err) === ErrorCode.NOT_LEADER,
  );
});

test("a follower that stops fetching leaves the ISR, and acks all goes on while min.insync.replicas is met", async (t) => {
  let minIsr = 2;
  const cluster = await startCluster(t, [1, 2, 3], TOPIC, {
    lagTimeMaxMs: 300,
    minInsyncReplicas: () => minIsr,
  });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2, 3]));
  const leader = cluster.node(1).broker;
  await leader.produce(TOPIC, 0, makeBatch("before"), "all");
  // Broker 3 stops fetching (as a paused process would).
  await cluster.node(3).manager.dropPartition(TOPIC, 0);
  const started = performance.now();
  const ack = await leader.produce(TOPIC, 0, makeBatch("during"), "all", 10_000);
  const waited = performance.now() - started;
  assert.ok(waited >= 250, `answered after ${waited.toFixed(0)} ms, before the follower could lag out`);
  assert.deepEqual(cluster.node(1).manager.describe(TOPIC, 0)?.isr, [1, 2]);
  assert.deepEqual(cluster.proposals.at(-1), { brokerId: 1, isr: [1, 2] });
  assert.ok(cluster.node(2).broker.partition(TOPIC, 0).logEndOffset > ack.lastOffset);
  minIsr = 3;
  await assert.rejects(leader.produce(TOPIC, 0, makeBatch("short"), "all"), (err) => {
    return codeOf(err) === ErrorCode.NOT_ENOUGH_REPLICAS;
  });
  // acks leader does not look at the ISR.
  await leader.produce(TOPIC, 0, makeBatch("leader-only"), "leader");
  // Broker 3 comes back, catches up and joins the ISR again.
  await cluster.apply(role(TOPIC, 1, 1, [1, 2, 3], [1, 2]), [3]);
  await until(() => cluster.node(1).manager.describe(TOPIC, 0)?.isr.length === 3, "broker 3 back in the ISR");
  await leader.produce(TOPIC, 0, makeBatch("after"), "all");
});

test("a follower whose log parted from the new leader's truncates to the epoch boundary", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const a = cluster.node(1).broker;
  const b = cluster.node(2).broker;
  for (let i = 0; i < 5; i++) await a.produce(TOPIC, 0, makeBatch(`committed${i}`, 2), "all");
  const boundary = a.partition(TOPIC, 0).logEndOffset;
  // Broker 2 stops following; broker 1 takes writes nobody else has (acks leader).
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  for (let i = 0; i < 3; i++) await a.produce(TOPIC, 0, makeBatch(`lost${i}`, 3), "leader");
  assert.equal(a.partition(TOPIC, 0).logEndOffset, boundary + 9);
  // Broker 2 leads epoch 2 and writes its own; broker 1 follows it.
  await cluster.apply(role(TOPIC, 2, 2, [1, 2], [2]), [2]);
  for (let i = 0; i < 2; i++) await b.produce(TOPIC, 0, makeBatch(`new${i}`, 1), "leader");
  await cluster.apply(role(TOPIC, 2, 2, [1, 2], [2]), [1]);
  const aLog = a.partition(TOPIC, 0);
  const bLog = b.partition(TOPIC, 0);
  await until(
    () => aLog.logEndOffset === bLog.logEndOffset && aLog.epochs.latestEpoch === 2,
    "broker 1 caught up",
  );
  assert.equal(aLog.logEndOffset, boundary + 2);
  assert.deepEqual(await batchCrcs(aLog, aLog.logEndOffset), await batchCrcs(bLog, bLog.logEndOffset));
  assert.deepEqual(aLog.epochs.entries, [
    { epoch: 1, startOffset: 0 },
    { epoch: 2, startOffset: boundary },
  ]);
  // And it rejoins the ISR of epoch 2.
  await until(() => cluster.node(2).manager.describe(TOPIC, 0)?.isr.length === 2, "broker 1 in the ISR");
});

test("a fenced leader acknowledges nothing more, not even a produce it took before", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { lagTimeMaxMs: 60_000 });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const a = cluster.node(1).broker;
  await a.produce(TOPIC, 0, makeBatch("ok"), "all");
  const hw = a.partition(TOPIC, 0).highWatermark;
  // The follower pauses; an acks all produce waits for it; then the leader's lease deadline passes.
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  const waiting = a.produce(TOPIC, 0, makeBatch("in-flight"), "all", 1_000);
  cluster.node(1).manager.fence();
  // The follower comes back, but a fenced leader serves it nothing, so nothing is acknowledged.
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]), [2]);
  await assert.rejects(waiting, (err) => codeOf(err) === ErrorCode.TIMEOUT);
  assert.equal(a.partition(TOPIC, 0).highWatermark, hw);
  await assert.rejects(
    a.produce(TOPIC, 0, makeBatch("after"), "all"),
    (err) => codeOf(err) === ErrorCode.NOT_LEADER,
  );
  await assert.rejects(
    a.produce(TOPIC, 0, makeBatch("after"), "leader"),
    (err) => codeOf(err) === ErrorCode.NOT_LEADER,
  );
});

test("a leader past its lease deadline moves no high watermark on a follower's word, before its fence has run", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { lagTimeMaxMs: 60_000 });
  // Broker 2 takes no role: the test speaks for it, as the server does for a follower's stream.
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]), [1]);
  const a = cluster.node(1).broker;
  const log = a.partition(TOPIC, 0);
  const waiting = a.produce(TOPIC, 0, makeBatch("in-flight"), "all", 1_000);
  await until(() => log.logEndOffset >= 1, "the leader's append");
  cluster.leaseExpired.add(1);
  // The follower's credit for the record arrives (read off the socket on waking, before the timer).
  cluster.node(1).manager.followerAt(TOPIC, 0, 2, 1, log.logEndOffset);
  await assert.rejects(waiting, (err) => codeOf(err) === ErrorCode.TIMEOUT);
  assert.equal(log.highWatermark, 0);
});

test("a leader fenced then unfenced leads the same epoch again, after a write of that epoch", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { lagTimeMaxMs: 60_000 });
  const epoch1 = role(TOPIC, 1, 1, [1, 2]);
  await cluster.apply(epoch1);
  const a = cluster.node(1).broker;
  await a.produce(TOPIC, 0, makeBatch("before"), "all");
  const manager = cluster.node(1).manager;
  manager.fence();
  await assert.rejects(
    a.produce(TOPIC, 0, makeBatch("fenced"), "all"),
    (err) => codeOf(err) === ErrorCode.NOT_LEADER,
  );
  // The lease is renewed in time: the controller moved nothing, and the node applies its roles again.
  manager.unfence();
  await manager.applyRole(epoch1);
  const ack = await a.produce(TOPIC, 0, makeBatch("after"), "all");
  assert.ok(cluster.node(2).broker.partition(TOPIC, 0).logEndOffset > ack.lastOffset);
  assert.deepEqual(a.partition(TOPIC, 0).epochs.entries, [{ epoch: 1, startOffset: 0 }]);
});

test("the SDK's acks all goes over the wire (acks 3) and is answered once the follower has the records", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { minInsyncReplicas: () => 2 });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const conch = createClient({ brokers: [`127.0.0.1:${cluster.node(1).endpoint.port}`] });
  t.after(() => conch.close());
  const producer = conch.producer({ acks: "all", lingerMs: 0 });
  const follower = cluster.node(2).broker.partition(TOPIC, 0);
  for (let i = 0; i < 20; i++) {
    const { offset } = await producer.send(TOPIC, { value: `v${i}`, partition: 0 });
    assert.ok(
      follower.logEndOffset > offset,
      `the follower has ${follower.logEndOffset}, the ack said ${offset}`,
    );
  }
  // Below min.insync.replicas the SDK sees NOT_ENOUGH_REPLICAS (retriable) until its delivery timeout.
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2], [1]), [1]);
  const short = conch.producer({ acks: "all", lingerMs: 0, deliveryTimeoutMs: 300 });
  await assert.rejects(short.send(TOPIC, { value: "x", partition: 0 }), (err) => {
    return codeOf(err) === ErrorCode.NOT_ENOUGH_REPLICAS || codeOf(err) === ErrorCode.TIMEOUT;
  });
});

test("consumers on the leader never read past the high watermark; past it and within the log is OFFSET_NOT_AVAILABLE", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC, { lagTimeMaxMs: 60_000 });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]));
  const a = cluster.node(1).broker;
  await a.produce(TOPIC, 0, makeBatch("replicated", 2), "all");
  await cluster.node(2).manager.dropPartition(TOPIC, 0);
  await a.produce(TOPIC, 0, makeBatch("leader-only", 2), "leader");
  const log = a.partition(TOPIC, 0);
  assert.equal(log.highWatermark, 2);
  assert.equal(log.logEndOffset, 4);
  const fetch = (offset: number, maxWaitMs = 0) =>
    a.fetch({ topic: TOPIC, partition: 0, offset, maxBytes: 1 << 20, maxWaitMs, minBytes: 1 });
  const atHw = await fetch(2, 50);
  assert.equal(atHw.records.length, 0);
  assert.equal(atHw.highWatermark, 2);
  await assert.rejects(fetch(3), (err) => codeOf(err) === ErrorCode.OFFSET_NOT_AVAILABLE);
  await assert.rejects(fetch(5), (err) => codeOf(err) === ErrorCode.OFFSET_OUT_OF_RANGE);
  // A long poll at the high watermark is answered when the follower catches up, not before.
  const polling = fetch(2, 10_000);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2]), [2]);
  const caughtUp = await polling;
  assert.equal(caughtUp.highWatermark, 4);
  assert.ok(caughtUp.records.length > 0);
});

test("a replica fetch for another epoch is FENCED_LEADER_EPOCH, and on a single broker NOT_LEADER", async (t) => {
  const cluster = await startCluster(t, [1], TOPIC);
  await cluster.apply(role(TOPIC, 1, 3, [1, 2], [1]), [1]);
  const conn = await Connection.open(
    { host: "127.0.0.1", port: cluster.node(1).endpoint.port },
    {
      clientId: "test",
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 5_000,
    },
  );
  t.after(() => conn.close());
  const open = (currentLeaderEpoch: number) =>
    new Promise<number>((resolve) => {
      conn.streamTo(
        encodeReplicaFetchRequest,
        {
          topic: TOPIC,
          partition: 0,
          replicaId: 2,
          currentLeaderEpoch,
          fetchOffset: 0,
          lastFetchedEpoch: NO_EPOCH,
          maxBytes: 1 << 20,
          maxWaitMs: 100,
          windowBytes: 1 << 20,
        },
        decodeReplicaFetchResponse,
        { responded: () => resolve(0), requestFailed: (err) => resolve(err.code) },
        null,
      );
    });
  assert.equal(await open(2), ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(await open(4), ErrorCode.FENCED_LEADER_EPOCH);
  // The right epoch opens a stream: the first (empty) response comes within maxWaitMs.
  assert.equal(await open(3), 0);
  await cluster.node(1).manager.close();
  assert.equal(await open(3), ErrorCode.NOT_LEADER);
});

test("a follower behind the leader's log start empties its log and starts again there", async (t) => {
  const cluster = await startCluster(t, [1, 2], TOPIC);
  const a = cluster.node(1).broker;
  await a.alterTopic(TOPIC, { "segment.bytes": "4096", "retention.bytes": "8192" });
  await cluster.apply(role(TOPIC, 1, 1, [1, 2], [1]), [1]);
  for (let i = 0; i < 100; i++) await a.produce(TOPIC, 0, makeBatch(`m${i}`, 2), "leader");
  const aLog = a.partition(TOPIC, 0);
  await aLog.enforceRetention();
  assert.ok(aLog.logStartOffset > 0, "retention removed the start of the leader's log");
  // Broker 2 still holds offsets 0-1 of an old life: far behind the leader's start.
  const bLog = cluster.node(2).broker.partition(TOPIC, 0);
  await bLog.append(makeBatch("old", 2));
  await cluster.apply(role(TOPIC, 1, 1, [1, 2], [1]), [2]);
  await until(() => bLog.logEndOffset === aLog.logEndOffset, "broker 2 caught up");
  assert.equal(bLog.logStartOffset, aLog.logStartOffset);
  assert.deepEqual(await batchCrcs(bLog, bLog.logEndOffset), await batchCrcs(aLog, aLog.logEndOffset));
  await until(() => cluster.node(1).manager.describe(TOPIC, 0)?.isr.length === 2, "broker 2 in the ISR");
});

test("a follower whose log is longer than the leader's is not counted at its fetch offset (nor let into the ISR)", async (t) => {
  const cluster = await startCluster(t, [1], TOPIC);
  await cluster.apply(role(TOPIC, 1, 1, [1, 2], [1]), [1]);
  await cluster.node(1).broker.produce(TOPIC, 0, makeBatch("a", 2), "all");
  const conn = await Connection.open(
    { host: "127.0.0.1", port: cluster.node(1).endpoint.port },
    { clientId: "test", connectTimeoutMs: 5_000, requestTimeoutMs: 5_000 },
  );
  t.after(() => conn.close());
  // Replica 2 claims 1000 records of no epoch: its log parted from this one at the leader's end.
  const res = await new Promise<ReplicaFetchResponse>((resolve, reject) => {
    conn.streamTo(
      encodeReplicaFetchRequest,
      {
        topic: TOPIC,
        partition: 0,
        replicaId: 2,
        currentLeaderEpoch: 1,
        fetchOffset: 1000,
        lastFetchedEpoch: NO_EPOCH,
        maxBytes: 1 << 20,
        maxWaitMs: 100,
        windowBytes: 1 << 20,
      },
      decodeReplicaFetchResponse,
      { responded: resolve, requestFailed: reject },
      null,
    );
  });
  assert.equal(res.diverging, true);
  assert.equal(res.divergingEndOffset, 2);
  assert.deepEqual(cluster.proposals, []);
  assert.deepEqual(cluster.node(1).manager.describe(TOPIC, 0)?.isr, [1]);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  assignReplicas,
  electLeader,
  initialRecord,
  preferredLeader,
  reassignStep,
  withoutLeaving,
} from "../../src/cluster/controller-decisions.js";
import type { PartitionRecord } from "../../src/cluster/metadata-records.js";

test("assignment: distinct replicas per partition, preferred leaders spread evenly, replicas evenly", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 7 }),
      fc.integer({ min: 1, max: 40 }),
      fc.string({ minLength: 1, maxLength: 10 }),
      fc.nat(),
      (brokers, partitions, topic, rfSeed) => {
        const rf = 1 + (rfSeed % brokers.length);
        const a = assignReplicas(topic, brokers, partitions, rf);
        assert.equal(a.length, partitions);
        const leaders = new Map<number, number>();
        const replicas = new Map<number, number>();
        for (const r of a) {
          assert.equal(r.length, rf);
          assert.equal(new Set(r).size, rf);
          for (const id of r) {
            assert.ok(brokers.includes(id));
            replicas.set(id, (replicas.get(id) ?? 0) + 1);
          }
          leaders.set(r[0] as number, (leaders.get(r[0] as number) ?? 0) + 1);
        }
        const spread = (m: Map<number, number>): number => {
          const counts = brokers.map((b) => m.get(b) ?? 0);
          return Math.max(...counts) - Math.min(...counts);
        };
        assert.ok(spread(leaders) <= 1, "leaders differ by at most one partition per broker");
        assert.ok(spread(replicas) <= rf, "replicas differ by at most rf per broker");
      },
    ),
  );
  assert.throws(() => assignReplicas("t", [1, 2], 1, 3), RangeError);
});

const record = (
  leaderId: number,
  leaderEpoch: number,
  replicas: number[],
  isr: number[],
): PartitionRecord => ({
  topic: "t",
  partition: 0,
  leaderId,
  leaderEpoch,
  replicas,
  isr,
  controllerEpoch: 1,
});

test("election: only a live ISR member ever leads, always at a higher epoch; a live leader keeps its epoch and loses its dead followers from the ISR", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
      fc.nat({ max: 1000 }),
      fc.nat(),
      (replicas, up, epoch, pick) => {
        const isr = replicas.filter((_, i) => i % 2 === 0 || pick % (i + 2) === 0);
        const leaderId = pick % 4 === 0 ? -1 : (isr[pick % isr.length] ?? -1);
        const live = (id: number): boolean => up[id - 1] === true;
        const before = record(leaderId, epoch, replicas, isr);
        // As the controller decides: an election first, then dead followers out of the ISR.
        const next = electLeader(before, live, 9) ?? withoutLeaving(before, live, 9);
        if (leaderId !== -1 && live(leaderId)) {
          if (isr.every(live)) assert.equal(next, null);
          else {
            assert.equal(next?.leaderId, leaderId);
            assert.equal(next?.leaderEpoch, epoch, "the same leadership: no new epoch");
            assert.deepEqual(next?.isr, isr.filter(live));
            assert.deepEqual(next?.replicas, replicas);
          }
          return;
        }
        const liveIsr = isr.filter(live);
        if (next === null) {
          assert.equal(leaderId, -1, "only an offline partition with no live ISR member is left as it is");
          assert.deepEqual(liveIsr, []);
          return;
        }
        assert.equal(next.leaderEpoch, epoch + 1);
        assert.equal(next.controllerEpoch, 9);
        assert.deepEqual(next.replicas, replicas);
        if (liveIsr.length === 0) {
          assert.equal(next.leaderId, -1);
          assert.deepEqual(next.isr, isr, "the last ISR is kept");
        } else {
          assert.equal(next.leaderId, liveIsr[0]);
          assert.deepEqual(next.isr, liveIsr);
        }
      },
    ),
  );
});

test("a new partition's record: the first live replica leads at epoch 0 with the live replicas in sync", () => {
  assert.deepEqual(
    initialRecord([3, 1, 2], (id) => id !== 3, 5),
    {
      leaderId: 1,
      leaderEpoch: 0,
      replicas: [3, 1, 2],
      isr: [1, 2],
      controllerEpoch: 5,
    },
  );
  assert.equal(initialRecord([3], () => false, 5).leaderId, -1);
});

test("reassignment: old + new replicas first, then the old ones go once the target is in sync; a leader leaving hands over at epoch + 1", () => {
  const all = (): boolean => true;
  const start = reassignStep(record(1, 4, [1, 2, 3], [1, 2, 3]), [4, 2, 3], all, 9);
  assert.deepEqual(start, {
    leaderId: 1,
    leaderEpoch: 4,
    replicas: [4, 2, 3, 1],
    isr: [1, 2, 3],
    controllerEpoch: 9,
    targetReplicas: [4, 2, 3],
  });
  const moving = { ...record(1, 4, [4, 2, 3, 1], [1, 2, 3]), targetReplicas: [4, 2, 3] };
  assert.equal(reassignStep(moving, [4, 2, 3], all, 9), null, "waits while broker 4 catches up");
  const done = reassignStep({ ...moving, isr: [1, 2, 3, 4] }, [4, 2, 3], all, 9);
  assert.deepEqual(done, {
    leaderId: 2,
    leaderEpoch: 5,
    replicas: [4, 2, 3],
    isr: [2, 3, 4],
    controllerEpoch: 9,
  });
  // The leader stays when it is among the target: same epoch.
  const kept = reassignStep({ ...moving, leaderId: 3, isr: [1, 2, 3, 4] }, [4, 2, 3], all, 9);
  assert.equal(kept?.leaderId, 3);
  assert.equal(kept?.leaderEpoch, 4);
  // A new target while one runs redirects it; nothing happens without a leader or without a move.
  assert.deepEqual(reassignStep(moving, [5, 2, 3], all, 9)?.replicas, [5, 2, 3, 4, 1]);
  assert.equal(reassignStep({ ...moving, leaderId: -1 }, [4, 2, 3], all, 9), null);
  assert.equal(reassignStep(record(1, 4, [1, 2, 3], [1, 2]), [1, 2, 3], all, 9), null);
});

test("preferred leader: back in the lead once in the ISR and able to lead, not during a move", () => {
  const all = (): boolean => true;
  assert.deepEqual(preferredLeader(record(2, 3, [1, 2, 3], [1, 2, 3]), all, 9), {
    leaderId: 1,
    leaderEpoch: 4,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    controllerEpoch: 9,
  });
  assert.equal(preferredLeader(record(2, 3, [1, 2, 3], [2, 3]), all, 9), null, "not in the ISR");
  assert.equal(preferredLeader(record(1, 3, [1, 2, 3], [1, 2, 3]), all, 9), null, "already leads");
  assert.equal(
    preferredLeader(record(2, 3, [1, 2, 3], [1, 2, 3]), (id) => id !== 1, 9),
    null,
    "shutting down",
  );
  assert.equal(
    preferredLeader({ ...record(2, 3, [1, 2, 3], [1, 2, 3]), targetReplicas: [1, 2, 3] }, all, 9),
    null,
  );
});

test("controlled shutdown: a leaving leader hands over to a leadable ISR member, leaving followers leave the ISR", () => {
  const up = (): boolean => true;
  const leadable = (id: number): boolean => id !== 1;
  assert.deepEqual(electLeader(record(1, 2, [1, 2, 3], [1, 2, 3]), up, 9, leadable), {
    leaderId: 2,
    leaderEpoch: 3,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    controllerEpoch: 9,
  });
  assert.equal(
    electLeader(record(1, 2, [1, 2], [1]), up, 9, leadable),
    null,
    "no one to take over: it keeps leading",
  );
  assert.deepEqual(withoutLeaving(record(2, 2, [1, 2, 3], [1, 2, 3]), leadable, 9)?.isr, [2, 3]);
  assert.equal(
    withoutLeaving(record(1, 2, [1, 2, 3], [1, 2, 3]), leadable, 9),
    null,
    "the leader hands over first",
  );
  assert.equal(withoutLeaving(record(2, 2, [1, 2, 3], [2, 3]), leadable, 9), null);
  // A follower whose broker is gone (not registered) is not leadable either: it leaves the ISR at once.
  assert.deepEqual(withoutLeaving(record(2, 2, [1, 2, 3], [1, 2, 3]), (id) => id !== 3, 9)?.isr, [1, 2]);
});

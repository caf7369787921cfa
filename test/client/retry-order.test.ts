/**
 * A partition's batches that a lost connection failed are sent again in their original order, and
 * no newer batch of the partition goes out ahead of them: the connection's table of requests and
 * the accumulator together, with correlation ids that start anywhere (so they cross multiples of
 * the table's ring and the wrap from the largest id back to 1) and connections lost at any point.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { MAX_CORRELATION_ID, nextCorrelationId, PendingTable } from "../../src/client/pending-table.js";
import type { ProducerBatch } from "../../src/client/producer-batch.js";
import { RecordAccumulator } from "../../src/client/record-accumulator.js";
import { HEADER_SIZE } from "../../src/format/layout.js";

type Step =
  | { kind: "append"; partition: number; records: number }
  | { kind: "ack"; pick: number }
  | { kind: "drop"; shuffle: number[] | null };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      partition: fc.nat(2),
      records: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("ack" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("drop" as const),
      // null: failures reported in the table's order, as the connection does; else in any order.
      shuffle: fc.option(fc.array(fc.nat(), { minLength: 1, maxLength: 40 }), { nil: null }),
    }),
  },
);

/** First ids near a multiple of the ring (256), near the largest id, or anywhere. */
const firstId = fc.oneof(
  fc.integer({ min: 1, max: 64 }).chain((k) => fc.integer({ min: k * 256 - 20, max: k * 256 + 2 })),
  fc.integer({ min: MAX_CORRELATION_ID - 30, max: MAX_CORRELATION_ID }),
  fc.integer({ min: 1, max: MAX_CORRELATION_ID }),
);

const microtasks = () => new Promise<void>((resolve) => setImmediate(resolve));

test("retries after a lost connection go out in send order per partition, ahead of newer batches, for any ids", async () => {
  await fc.assert(
    fc.asyncProperty(
      firstId,
      fc.integer({ min: 1, max: 12 }),
      fc.array(step, { minLength: 5, maxLength: 120 }),
      async (first, maxInFlight, steps) => {
        const table = new PendingTable<{ id: number; batch: ProducerBatch }>();
        let nextId = first;
        // Per partition: seqs not yet acknowledged, and those sent since the last lost connection.
        const unacked = new Map<number, Set<number>>();
        const sentSinceDrop = new Map<number, Set<number>>();
        const lastSent = new Map<number, number>();
        const acc = new RecordAccumulator(
          { batchBytes: 1 << 20, lingerMs: 0, bufferBytes: 1 << 30, maxInFlight },
          (batch) => {
            const p = batch.partition;
            const seq = batch.seq;
            const last = lastSent.get(p) ?? -1;
            assert.ok(seq > last, `partition ${p}: batch ${seq} sent after batch ${last}`);
            const sent = sentSinceDrop.get(p) ?? new Set<number>();
            for (const s of unacked.get(p) ?? []) {
              assert.ok(s >= seq || sent.has(s), `partition ${p}: batch ${seq} overtook batch ${s}`);
            }
            sent.add(seq);
            sentSinceDrop.set(p, sent);
            lastSent.set(p, seq);
            table.add({ id: nextId, batch });
            nextId = nextCorrelationId(nextId);
          },
        );
        const ack = (id: number) => {
          const e = table.take(id)!;
          unacked.get(e.batch.partition)!.delete(e.batch.seq);
          e.batch.complete(0);
          acc.done(e.batch);
        };
        for (const s of steps) {
          if (s.kind === "append") {
            for (let i = 0; i < s.records; i++) {
              const b = acc.append("t", s.partition, "v", null, 1, HEADER_SIZE + 1, noop, noop);
              let set = unacked.get(s.partition);
              if (set === undefined) unacked.set(s.partition, (set = new Set()));
              set.add(b.seq);
            }
          } else if (s.kind === "ack") {
            const inFlight = table.entries();
            if (inFlight.length > 0) ack(inFlight[s.pick % inFlight.length]!.id);
          } else {
            const failed = table.clear();
            if (s.shuffle !== null) {
              for (let i = failed.length - 1; i > 0; i--) {
                const j = s.shuffle[i % s.shuffle.length]! % (i + 1);
                [failed[i], failed[j]] = [failed[j]!, failed[i]!];
              }
            }
            sentSinceDrop.clear();
            lastSent.clear();
            for (const e of failed) acc.retry(e.batch, 0);
          }
          await microtasks();
        }
        // Everything still owed goes out and is acknowledged: nothing is held back for good.
        acc.sealAll();
        await microtasks();
        for (let rounds = 0; acc.unsettledBatches > 0; rounds++) {
          assert.ok(rounds < 1000, "batches left unsent");
          for (const e of table.entries()) ack(e.id);
          await microtasks();
        }
        for (const set of unacked.values()) assert.equal(set.size, 0);
        acc.stop();
      },
    ),
    { numRuns: 150 },
  );
});

test("the table lists its requests in the order they were added, across the ring and the id wrap", () => {
  fc.assert(
    fc.property(firstId, fc.integer({ min: 1, max: 700 }), fc.array(fc.nat()), (first, n, takes) => {
      const table = new PendingTable<{ id: number }>();
      const added: number[] = [];
      for (let i = 0, id = first; i < n; i++, id = nextCorrelationId(id)) {
        table.add({ id });
        added.push(id);
      }
      const left = new Set(added);
      for (const t of takes) {
        const id = added[t % added.length]!;
        table.take(id);
        left.delete(id);
      }
      const expected = added.filter((id) => left.has(id));
      assert.deepEqual(
        table.entries().map((e) => e.id),
        expected,
      );
      assert.deepEqual(
        table.clear().map((e) => e.id),
        expected,
      );
    }),
    { numRuns: 300 },
  );
});

function noop(): void {}

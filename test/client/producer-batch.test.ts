import assert from "node:assert/strict";
import test from "node:test";
import fc from "fast-check";
import {
  ProducerBatch,
  type RecordMetadata,
  type SendBatchResult,
  SendGroup,
} from "../../src/client/producer-batch.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

/** Where a message ended up: its batch and its position in that batch. */
interface Placed {
  batch: number;
  position: number;
}

test("every message of sends and sendBatch groups spread over batches gets base + its position", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ group: fc.integer({ min: -1, max: 2 }), batch: fc.integer({ min: 0, max: 2 }) }), {
        minLength: 1,
        maxLength: 40,
      }),
      fc.array(fc.integer({ min: -1, max: 1_000_000 }), { minLength: 3, maxLength: 3 }),
      (messages, bases) => {
        const batches = [0, 1, 2].map((p) => new ProducerBatch("t", p + 10, 0));
        const groupSizes = [0, 0, 0];
        for (const m of messages) if (m.group >= 0) groupSizes[m.group]!++;
        const groupResults: Array<SendBatchResult | null> = [null, null, null];
        const groups = groupSizes.map(
          (n, g) =>
            new SendGroup(
              n,
              (r) => {
                groupResults[g] = r;
              },
              () => assert.fail("no group fails here"),
            ),
        );
        const groupPlaced: Placed[][] = [[], [], []];
        const sendResults: Array<{ placed: Placed; result: RecordMetadata | null }> = [];
        for (const m of messages) {
          const batch = batches[m.batch]!;
          const placed = { batch: m.batch, position: batch.count };
          if (m.group >= 0) {
            batch.addSink(groups[m.group]!, groupPlaced[m.group]!.length);
            groupPlaced[m.group]!.push(placed);
          } else {
            const entry: { placed: Placed; result: RecordMetadata | null } = { placed, result: null };
            sendResults.push(entry);
            batch.addSink(
              (r) => {
                entry.result = r;
              },
              () => assert.fail("no send fails here"),
            );
          }
        }
        for (let i = 0; i < 3; i++) batches[i]!.complete(bases[i]!);
        const expected = (p: Placed) => ({
          partition: p.batch + 10,
          offset: bases[p.batch]! < 0 ? -1 : bases[p.batch]! + p.position,
        });
        for (const { placed, result } of sendResults) assert.deepEqual(result, expected(placed));
        for (let g = 0; g < 3; g++) {
          if (groupSizes[g] === 0) continue;
          const r = groupResults[g];
          assert.ok(r !== null && r !== undefined, `group ${g} resolved`);
          groupPlaced[g]!.forEach((placed, i) => {
            const want = expected(placed);
            assert.equal(r.partitions[i], want.partition, `group ${g} message ${i} partition`);
            assert.equal(r.offsets[i], want.offset, `group ${g} message ${i} offset`);
          });
        }
      },
    ),
  );
});

test("a failed batch rejects each send and each group once, and other batches still complete", () => {
  const rejected: string[] = [];
  const group = new SendGroup(
    4,
    () => assert.fail("the group has a failed message"),
    (e) => rejected.push(`group ${e.codeName}`),
  );
  const a = new ProducerBatch("t", 0, 0);
  const b = new ProducerBatch("t", 0, 1);
  a.addSink(group, 0);
  a.addSink(group, 1);
  a.addSink(
    () => assert.fail("the send failed"),
    (e) => rejected.push(`send ${e.codeName}`),
  );
  b.addSink(group, 2);
  b.addSink(group, 3);
  a.fail(new ConchError(ErrorCode.STORAGE_ERROR, "disk"));
  b.complete(5);
  assert.deepEqual(rejected, ["group STORAGE_ERROR", "send STORAGE_ERROR"]);
  assert.equal(a.count, 3);
  assert.equal(b.count, 2);
});

test("results of many sendBatch calls, small and large, never share memory", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 1200 }), { minLength: 1, maxLength: 120 }), (sizes) => {
      const results: SendBatchResult[] = [];
      sizes.forEach((n, call) => {
        const group = new SendGroup(
          n,
          (r) => results.push(r),
          () => assert.fail("no group fails here"),
        );
        if (n === 0) {
          results.push(group.result());
          return;
        }
        const batch = new ProducerBatch("t", call, 0);
        for (let i = 0; i < n; i++) batch.addSink(group, i);
        batch.complete(call * 10_000);
      });
      // Checked only once every call has resolved: a later call must not have written over an earlier one.
      assert.equal(results.length, sizes.length);
      results.forEach((r, call) => {
        assert.equal(r.offsets.length, sizes[call]);
        assert.equal(r.partitions.length, sizes[call]);
        for (let i = 0; i < sizes[call]!; i++) {
          assert.equal(r.offsets[i], call * 10_000 + i);
          assert.equal(r.partitions[i], call);
        }
      });
    }),
    { numRuns: 50 },
  );
});

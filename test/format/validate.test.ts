/**
 * Every way a batch can be malformed, one at a time: checkBatch must return the matching negative
 * BatchStatus (never throw, never a size) and validateBatches must throw the matching ConchError.
 * Tampered batches are re-sealed with a fresh CRC first (helpers.reseal), so that each test shows
 * the structural check catching the problem, not the checksum.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BatchStatus,
  batchError,
  batchStatusMessage,
  ConchError,
  checkBatch,
  ErrorCode,
  MAX_OFFSET,
  validateBatches,
} from "../../src/format/index.js";
import {
  boundedView,
  buildBatch,
  innerRecordAt,
  refBatchCrc,
  reseal,
  smallBatch,
  statusName,
} from "./helpers.js";

const MAX = 1 << 20;

/** checkBatch's result on a copy of `batch` changed by `mutate` and re-sealed. */
function checkTampered(
  mutate: (b: Buffer) => void,
  options: { reseal?: boolean; base?: Buffer } = {},
): number {
  const b = Buffer.from(options.base ?? smallBatch());
  mutate(b);
  if (options.reseal !== false) reseal(b);
  return checkBatch(b, 0, b.length, MAX);
}

function expectStatus(expected: number, mutate: (b: Buffer) => void, note = ""): void {
  const b = Buffer.from(smallBatch());
  mutate(b);
  reseal(b);
  assert.equal(statusName(checkBatch(b, 0, b.length, MAX)), statusName(expected), note);
  const code =
    expected === BatchStatus.BAD_CRC
      ? ErrorCode.CORRUPT_BATCH
      : expected === BatchStatus.TOO_LARGE
        ? ErrorCode.BATCH_TOO_LARGE
        : expected === BatchStatus.UNSUPPORTED_COMPRESSION
          ? ErrorCode.UNSUPPORTED_COMPRESSION
          : ErrorCode.INVALID_BATCH;
  assert.throws(
    () => validateBatches(b, MAX),
    (e: unknown) =>
      e instanceof ConchError && e.code === code && e.message.includes(batchStatusMessage(expected)),
    note,
  );
}

test("a valid batch checks as its size, alone and inside a larger buffer", () => {
  const b = smallBatch();
  assert.equal(checkBatch(b, 0, b.length, MAX), b.length);
  const padded = Buffer.concat([Buffer.alloc(7, 0xee), b, Buffer.alloc(5, 0xee)]);
  assert.equal(checkBatch(padded, 7, 7 + b.length, MAX), b.length);
  assert.equal(checkBatch(padded, 7, padded.length, MAX), b.length, "trailing bytes are the next batch's");
  assert.equal(b.readUInt32BE(29), refBatchCrc(b), "BatchBuilder's CRC is the reference CRC");
});

test("checkBatch reads nothing outside buf[at, end)", () => {
  const b = smallBatch();
  const padded = Buffer.concat([Buffer.alloc(7, 0xc1), b, Buffer.alloc(64, 0xc1)]);
  for (let end = 7; end <= 7 + b.length + 64; end++) {
    const { view, violations } = boundedView(padded, 7, end);
    const status = checkBatch(view, 7, end, MAX);
    assert.deepEqual(violations, [], `end=${end}`);
    assert.equal(status, end - 7 >= b.length ? b.length : BatchStatus.TRUNCATED, `end=${end}`);
  }
});

test("every truncation of a valid batch is TRUNCATED, never a throw and never a size", () => {
  const b = smallBatch();
  for (let len = 0; len < b.length; len++) {
    const cut = Buffer.from(b.subarray(0, len));
    assert.equal(checkBatch(cut, 0, cut.length, MAX), BatchStatus.TRUNCATED, `length ${len}`);
    assert.equal(checkBatch(b, 0, len, MAX), BatchStatus.TRUNCATED, `end ${len} of the whole buffer`);
    assert.throws(
      () => validateBatches(cut, MAX),
      (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH,
    );
  }
  // The second of two batches cut short: validateBatches names it.
  const two = Buffer.concat([b, b]);
  for (let len = b.length + 1; len < two.length; len++) {
    assert.throws(
      () => validateBatches(two.subarray(0, len), MAX),
      (e: unknown) =>
        e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH && /^batch 1: /.test(e.message),
    );
  }
});

test("wrong magic byte, outer and inner", () => {
  for (let m = 0; m < 256; m++) {
    if (m === 0xc1) continue;
    assert.equal(
      checkTampered((b) => {
        b[0] = m;
      }),
      BatchStatus.BAD_MAGIC,
    );
    for (const i of [0, 1, 2]) {
      const status = checkTampered((b) => {
        b[innerRecordAt(b, i)] = m;
      });
      assert.equal(statusName(status), "BAD_RECORD", `record ${i} magic ${m}`);
    }
  }
  expectStatus(BatchStatus.BAD_MAGIC, (b) => {
    b[0] = 0xc2;
  });
  expectStatus(BatchStatus.BAD_RECORD, (b) => {
    b[innerRecordAt(b, 2)] = 0;
  });
});

test("metadata (key) size other than 20", () => {
  for (const size of [0, 1, 19, 21, 40, 0xffffffff]) {
    expectStatus(BatchStatus.BAD_METADATA, (b) => b.writeUInt32BE(size, 17), `key size ${size}`);
  }
});

test("sizes past the end: outer payload size, inner key and payload sizes", () => {
  expectStatus(BatchStatus.TRUNCATED, (b) => b.writeUInt32BE(b.readUInt32BE(21) + 1, 21), "payload size + 1");
  expectStatus(BatchStatus.TOO_LARGE, (b) => b.writeUInt32BE(0xffffffff, 21), "payload size 2^32 - 1");
  for (const i of [0, 1, 2]) {
    expectStatus(
      BatchStatus.BAD_RECORD,
      (b) => {
        const p = innerRecordAt(b, i);
        b.writeUInt32BE(b.length - p, p + 17); // the key alone reaches past the batch end
      },
      `record ${i} key size`,
    );
    expectStatus(
      BatchStatus.BAD_RECORD,
      (b) => {
        const p = innerRecordAt(b, i);
        b.writeUInt32BE(0xffffffff, p + 21);
      },
      `record ${i} payload size`,
    );
  }
  // The last record one byte short of the payload end: the records no longer fill it.
  expectStatus(BatchStatus.BAD_COUNT, (b) => {
    const p = innerRecordAt(b, 2);
    b.writeUInt32BE(b.readUInt32BE(p + 21) - 1, p + 21);
  });
});

test("record count 0, too many, too few", () => {
  expectStatus(BatchStatus.BAD_COUNT, (b) => b.writeUInt32BE(0, 25), "count 0");
  expectStatus(BatchStatus.BAD_COUNT, (b) => b.writeUInt32BE(4, 25), "count 4 for 3 records");
  expectStatus(BatchStatus.BAD_COUNT, (b) => b.writeUInt32BE(0xffffffff, 25), "count 2^32 - 1");
  expectStatus(BatchStatus.BAD_COUNT, (b) => b.writeUInt32BE(2, 25), "count 2 for 3 records");
  expectStatus(BatchStatus.BAD_COUNT, (b) => b.writeUInt32BE(1, 25), "count 1 for 3 records");
  // An empty payload with a count of 1, and with a count of 0.
  for (const count of [1, 0]) {
    const bare = Buffer.from(smallBatch().subarray(0, 49));
    bare.writeUInt32BE(0, 21);
    bare.writeUInt32BE(count, 25);
    reseal(bare);
    assert.equal(checkBatch(bare, 0, bare.length, MAX), BatchStatus.BAD_COUNT, `count ${count}`);
  }
});

test("inner offset delta other than the record's index", () => {
  for (const i of [0, 1, 2]) {
    for (const [hi, lo] of [
      [0, i + 1],
      [0, i === 0 ? 1 : i - 1],
      [1, i],
      [0xffffffff, i],
    ] as const) {
      expectStatus(
        BatchStatus.BAD_RECORD,
        (b) => {
          const p = innerRecordAt(b, i);
          b.writeUInt32BE(hi, p + 9);
          b.writeUInt32BE(lo, p + 13);
        },
        `record ${i} delta ${hi}:${lo}`,
      );
    }
  }
});

test("inner record count other than 1", () => {
  for (const i of [0, 1, 2]) {
    for (const n of [0, 2, 3, 0xffffffff]) {
      expectStatus(
        BatchStatus.BAD_RECORD,
        (b) => b.writeUInt32BE(n, innerRecordAt(b, i) + 25),
        `record ${i}`,
      );
    }
  }
});

test("reserved bits: attributes bits 5-15, bit 4 with another bit, producer fields out of range", () => {
  // Bit 4 alone names a Kafka payload: Conch inner records are never read as one (BAD_RECORD).
  expectStatus(BatchStatus.BAD_RECORD, (b) => b.writeUInt16BE(0x0010, 33), "attribute bit 4 alone");
  expectStatus(BatchStatus.BAD_METADATA, (b) => b.writeUInt16BE(0x0018, 33), "attribute bits 4 and 3");
  for (let bit = 5; bit < 16; bit++) {
    expectStatus(BatchStatus.BAD_METADATA, (b) => b.writeUInt16BE(1 << bit, 33), `attribute bit ${bit}`);
  }
  // Without a producer id the epoch is 0, as the reserved u16 it was.
  for (const v of [1, 0x8000, 0xffff]) {
    expectStatus(BatchStatus.BAD_METADATA, (b) => b.writeUInt16BE(v, 35), `epoch ${v} without a producer id`);
  }
  const withProducer = (b: Buffer): void => {
    b.writeBigUInt64BE(123n, 37);
  };
  expectStatus(
    BatchStatus.BAD_METADATA,
    (b) => {
      withProducer(b);
      b.writeUInt16BE(0x8000, 35);
    },
    "epoch above 32767",
  );
  expectStatus(
    BatchStatus.BAD_METADATA,
    (b) => {
      withProducer(b);
      b.writeUInt32BE(0x80000000, 45);
    },
    "sequence above 2^31 - 1",
  );
  expectStatus(
    BatchStatus.BAD_METADATA,
    (b) => b.writeBigUInt64BE(2n ** 53n, 37),
    "producer id past 2^53 - 1",
  );
});

test("compression codecs past 4 (zstd); 1-4 are compressed batches (compressed-batch.test.ts)", () => {
  for (let codec = 5; codec <= 7; codec++) {
    expectStatus(BatchStatus.UNSUPPORTED_COMPRESSION, (b) => b.writeUInt16BE(codec, 33), `codec ${codec}`);
  }
});

test("producer id, epoch and base sequence in range are checked by the CRC only", () => {
  const status = checkTampered((b) => {
    b.writeUInt16BE(0x7fff, 35);
    b.writeBigUInt64BE(2n ** 53n - 1n, 37);
    b.writeUInt32BE(0x7fffffff, 45);
  });
  assert.equal(status, smallBatch().length);
});

test("batch timestamp must be the largest inner timestamp", () => {
  const ts = (b: Buffer) => b.readBigUInt64BE(1);
  expectStatus(BatchStatus.BAD_TIMESTAMP, (b) => b.writeBigUInt64BE(ts(b) + 1n, 1), "above every record's");
  expectStatus(BatchStatus.BAD_TIMESTAMP, (b) => b.writeBigUInt64BE(ts(b) - 1n, 1), "below the largest");
  expectStatus(BatchStatus.BAD_TIMESTAMP, (b) => b.writeBigUInt64BE(0n, 1), "zero");
  expectStatus(
    BatchStatus.BAD_TIMESTAMP,
    (b) => {
      const p = innerRecordAt(b, 0);
      b.writeBigUInt64BE(ts(b) + 1n, p + 1);
    },
    "a record's timestamp above the batch's",
  );
  expectStatus(
    BatchStatus.BAD_TIMESTAMP,
    (b) => {
      const p = innerRecordAt(b, 0);
      b.writeBigUInt64BE(ts(b) + (1n << 32n), p + 1);
    },
    "a record's timestamp above the batch's in its high 32 bits",
  );
  // The batch timestamp equal to the first record's (not the largest) still fails; equal to the
  // largest one in any position passes.
  const status = checkTampered((b) => b.writeBigUInt64BE(b.readBigUInt64BE(innerRecordAt(b, 0) + 1), 1));
  assert.equal(status, BatchStatus.BAD_TIMESTAMP);
});

test("batch larger than maxBatchBytes", () => {
  const b = smallBatch();
  assert.equal(checkBatch(b, 0, b.length, b.length), b.length);
  assert.equal(checkBatch(b, 0, b.length, b.length - 1), BatchStatus.TOO_LARGE);
  assert.equal(checkBatch(b, 0, 29, b.length - 1), BatchStatus.TOO_LARGE, "known from the header alone");
  assert.throws(
    () => validateBatches(b, b.length - 1),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.BATCH_TOO_LARGE,
  );
  assert.deepEqual(validateBatches(b, b.length), { batches: 1, records: 3 });
});

test("base offset or last offset past 2^53 - 1", () => {
  const b = smallBatch(); // 3 records
  const at = (base: bigint) => checkTampered((x) => x.writeBigUInt64BE(base, 9), { reseal: false, base: b });
  assert.equal(at(BigInt(MAX_OFFSET) - 2n), b.length, "last offset exactly 2^53 - 1");
  assert.equal(at(BigInt(MAX_OFFSET) - 1n), BatchStatus.BAD_OFFSET, "last offset 2^53");
  assert.equal(at(BigInt(MAX_OFFSET)), BatchStatus.BAD_OFFSET);
  assert.equal(at(2n ** 53n), BatchStatus.BAD_OFFSET);
  assert.equal(at(2n ** 64n - 1n), BatchStatus.BAD_OFFSET);
  expectStatus(BatchStatus.BAD_OFFSET, (x) => x.writeBigUInt64BE(2n ** 60n, 9));
});

test("a bad CRC: every single-bit flip and every byte inversion is caught, except in the base offset", () => {
  const b = smallBatch();
  for (let i = 0; i < b.length; i++) {
    for (const mask of [1, 2, 4, 8, 16, 32, 64, 128, 0xff]) {
      const x = Buffer.from(b);
      x[i] = x[i]! ^ mask;
      const status = checkBatch(x, 0, x.length, MAX);
      if (i >= 9 && i < 17) {
        // The broker's field: not covered, so any offset the checks allow is accepted.
        const base = x.readBigUInt64BE(9);
        assert.equal(
          status,
          base + 2n <= BigInt(MAX_OFFSET) ? b.length : BatchStatus.BAD_OFFSET,
          `byte ${i}`,
        );
      } else {
        assert.ok(status < 0, `flip ${mask} at byte ${i} went undetected`);
        // Fields no structural check looks at are caught by the CRC itself.
        if ((i >= 29 && i < 33) || isKeyOrValueByte(b, i)) {
          assert.equal(statusName(status), "BAD_CRC", `byte ${i}`);
        }
        // Producer fields: out of their ranges by the metadata rule, else by the CRC.
        if (i >= 35 && i < 49)
          assert.ok(["BAD_CRC", "BAD_METADATA"].includes(statusName(status)), `byte ${i}`);
      }
    }
  }
});

test("validateBatches throws CORRUPT_BATCH for a CRC mismatch", () => {
  const b = Buffer.from(smallBatch());
  b[b.length - 1] = b[b.length - 1]! ^ 0x20;
  assert.equal(checkBatch(b, 0, b.length, MAX), BatchStatus.BAD_CRC);
  assert.throws(
    () => validateBatches(b, MAX),
    (e: unknown) =>
      e instanceof ConchError &&
      e.code === ErrorCode.CORRUPT_BATCH &&
      e.message === "batch 0: batch CRC32C mismatch",
  );
});

test("validateBatches counts batches and records, and rejects an empty buffer", () => {
  const one = smallBatch();
  const two = buildBatch([{ value: "x", key: null, timestampMs: 5 }]);
  assert.deepEqual(validateBatches(Buffer.concat([one, two, one]), MAX), { batches: 3, records: 7 });
  assert.throws(
    () => validateBatches(Buffer.alloc(0), MAX),
    (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH,
  );
  // The third batch is bad: nothing is modified, and the error names batch 2.
  const bad = Buffer.concat([one, two, Buffer.from(one)]);
  bad[one.length + two.length] = 0;
  const before = Buffer.from(bad);
  assert.throws(
    () => validateBatches(bad, MAX),
    (e: unknown) =>
      e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH && e.message.startsWith("batch 2: "),
  );
  assert.deepEqual(bad, before);
});

test("batchError and batchStatusMessage cover every status", () => {
  for (const [name, status] of Object.entries(BatchStatus)) {
    const e = batchError(status, 3);
    assert.ok(e instanceof ConchError);
    assert.equal(
      e.code,
      name === "BAD_CRC"
        ? ErrorCode.CORRUPT_BATCH
        : name === "TOO_LARGE"
          ? ErrorCode.BATCH_TOO_LARGE
          : name === "UNSUPPORTED_COMPRESSION"
            ? ErrorCode.UNSUPPORTED_COMPRESSION
            : ErrorCode.INVALID_BATCH,
    );
    assert.ok(!batchStatusMessage(status).startsWith("unknown"), name);
    assert.equal(e.message, `batch 3: ${batchStatusMessage(status)}`);
  }
  assert.equal(batchStatusMessage(-99), "unknown batch status -99");
});

/** Whether byte i of `batch` lies in an inner record's key or value. */
function isKeyOrValueByte(batch: Buffer, i: number): boolean {
  for (let p = 49; p < batch.length; ) {
    const end = p + 29 + batch.readUInt32BE(p + 17) + batch.readUInt32BE(p + 21);
    if (i >= p + 29 && i < end) return true;
    p = end;
  }
  return false;
}

/** ConchError and the stable error codes every layer and the wire share. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode, errorName, isRetriable } from "../../src/format/index.js";

test("error codes are the numbers docs/protocol.md lists, and unique", () => {
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.CORRUPT_BATCH, 13);
  assert.equal(ErrorCode.INVALID_BATCH, 14);
  assert.equal(ErrorCode.BATCH_TOO_LARGE, 15);
  assert.equal(ErrorCode.INVALID_REQUEST, 21);
  assert.equal(ErrorCode.CORRUPT_DATA, 22);
  assert.equal(
    isRetriable(ErrorCode.CORRUPT_DATA),
    false,
    "reading damaged data again gives the same answer",
  );
  assert.equal(ErrorCode.INVALID_GROUP, 36);
  const numbers = Object.values(ErrorCode);
  assert.equal(new Set(numbers).size, numbers.length);
});

test("errorName names known codes and marks unknown ones", () => {
  for (const [name, code] of Object.entries(ErrorCode)) assert.equal(errorName(code), name);
  assert.equal(errorName(77), "UNKNOWN_77");
});

test("ConchError carries code, codeName, message, cause and retriability", () => {
  const cause = new Error("disk");
  const e = new ConchError(ErrorCode.TIMEOUT, "timed out", { cause });
  assert.ok(e instanceof Error);
  assert.equal(e.name, "ConchError");
  assert.equal(e.code, 17);
  assert.equal(e.codeName, "TIMEOUT");
  assert.equal(e.message, "timed out");
  assert.equal(e.cause, cause);
  assert.equal(e.retriable, true);
  assert.equal(new ConchError(ErrorCode.INVALID_BATCH, "x").retriable, false);
  const retriable = Object.values(ErrorCode).filter((c) => isRetriable(c));
  assert.deepEqual(retriable.map(errorName).sort(), [
    "BUFFER_FULL",
    "CONNECTION_CLOSED",
    "FENCED_LEADER_EPOCH",
    "NOT_COORDINATOR",
    "NOT_ENOUGH_REPLICAS",
    "NOT_LEADER",
    "OFFSET_NOT_AVAILABLE",
    "REBALANCE_IN_PROGRESS",
    "SHUTTING_DOWN",
    "TIMEOUT",
  ]);
});

/**
 * The one Conch -> Kafka error table (src/kafka/server/kafka-errors.ts): the group APIs answer
 * what every other API answers (but for a stopping broker), and docs/kafka.md's table says what
 * the code does, row for row.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { KafkaErrorCode } from "../../src/kafka/protocol/error-codes.js";
import { kafkaErrorCode, kafkaGroupErrorCode } from "../../src/kafka/server/kafka-errors.js";

const CODES = Object.entries(ErrorCode) as [string, number][];

test("kafka errors: a group API answers every Conch error as the other APIs do, a stopping broker aside", () => {
  for (const [name, code] of CODES) {
    const err = new ConchError(code, name);
    const want =
      code === ErrorCode.SHUTTING_DOWN ? KafkaErrorCode.COORDINATOR_NOT_AVAILABLE : kafkaErrorCode(err);
    assert.equal(kafkaGroupErrorCode(err), want, name);
  }
  assert.equal(
    kafkaErrorCode(new ConchError(ErrorCode.SHUTTING_DOWN, "")),
    KafkaErrorCode.NOT_LEADER_OR_FOLLOWER,
  );
  // Not a ConchError: a bug, thrown on for the session to log.
  assert.throws(() => kafkaGroupErrorCode(new TypeError("bug")), TypeError);
  assert.equal(kafkaErrorCode(new TypeError("bug")), KafkaErrorCode.UNKNOWN_SERVER_ERROR);
});

test("kafka errors: docs/kafka.md's table lists exactly the codes the table maps, with their numbers", () => {
  const doc = readFileSync(fileURLToPath(new URL("../../../docs/kafka.md", import.meta.url)), "utf8");
  const start = doc.indexOf("| Conch | Kafka |");
  assert.ok(start >= 0, "the table is there");
  const rows = doc.slice(start).split("\n").slice(2);
  const documented = new Map<string, number>();
  for (const row of rows) {
    if (!row.startsWith("|")) break;
    const [, conch, kafka] = row.split("|").map((c) => c.trim());
    if (conch === "anything else") continue;
    const number = Number(/^-?\d+/.exec(kafka!)?.[0]);
    for (const name of conch!.split(",").map((n) => n.trim())) documented.set(name, number);
  }
  const mapped = new Map<string, number>();
  for (const [name, code] of CODES) {
    const k = kafkaErrorCode(new ConchError(code, name));
    if (k !== KafkaErrorCode.UNKNOWN_SERVER_ERROR) mapped.set(name, k);
  }
  assert.deepEqual([...documented.entries()].sort(), [...mapped.entries()].sort());
});

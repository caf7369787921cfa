import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { checkTopicName, isInternalTopicName, topicNameProblem } from "../../src/format/topic-name.js";

const good = [
  "a",
  "orders",
  "Orders.v2",
  "with_underscore",
  "with-dash",
  "...",
  ".hidden",
  "-leading-dash",
  "0",
  "a".repeat(249),
  "A-Za-z0-9._-",
];

const bad: [string, RegExp][] = [
  ["", /empty/],
  [".", /must not be "\."/],
  ["..", /must not be "\.\."/],
  ["../x", /only ASCII letters/],
  ["x/../y", /only ASCII letters/],
  ["/etc", /only ASCII letters/],
  ["a\\b", /only ASCII letters/],
  ["a b", /only ASCII letters/],
  ["a\0b", /only ASCII letters/],
  ["a\nb", /only ASCII letters/],
  ["tópico", /only ASCII letters/],
  ["日本", /only ASCII letters/],
  ["emoji😀", /only ASCII letters/],
  ["~deleted-1", /only ASCII letters/],
  ["a:b", /only ASCII letters/],
  ["a".repeat(250), /250 characters long; the limit is 249/],
];

test("legal topic names pass", () => {
  for (const name of good) {
    assert.equal(topicNameProblem(name), null, name);
    checkTopicName(name);
  }
});

test("illegal topic names fail with INVALID_TOPIC_NAME and say why", () => {
  for (const [name, why] of bad) {
    assert.match(topicNameProblem(name) ?? "", why, JSON.stringify(name));
    assert.throws(
      () => checkTopicName(name),
      (err: unknown) =>
        err instanceof ConchError && err.code === ErrorCode.INVALID_TOPIC_NAME && why.test(err.message),
      JSON.stringify(name),
    );
  }
});

test("a non-string name is refused", () => {
  assert.match(topicNameProblem(42) ?? "", /must be a string/);
});

test("internal names are refused from clients and required by the internal API", () => {
  assert.equal(isInternalTopicName("__consumer_offsets"), true);
  assert.equal(isInternalTopicName("_single"), false);
  assert.throws(() => checkTopicName("__consumer_offsets"), /reserved/);
  checkTopicName("__consumer_offsets", { internal: true });
  checkTopicName("_single");
  assert.throws(() => checkTopicName("orders", { internal: true }), /must start with "__"/);
  assert.throws(() => checkTopicName("__../x", { internal: true }), /only ASCII letters/);
});

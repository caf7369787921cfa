import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError } from "commander";
import {
  collectConfig,
  integerParser,
  parseBrokerAddress,
  parseSeparator,
  parseStartPosition,
} from "../../src/cli/options.js";

test("broker addresses", () => {
  assert.deepEqual(parseBrokerAddress("127.0.0.1:7420"), { host: "127.0.0.1", port: 7420 });
  assert.deepEqual(parseBrokerAddress("localhost"), { host: "localhost", port: 7420 });
  assert.deepEqual(parseBrokerAddress("[::1]:9000"), { host: "::1", port: 9000 });
  for (const bad of ["", ":7420", "host:0", "host:70000", "host:x", "a:b:c"]) {
    assert.throws(() => parseBrokerAddress(bad), InvalidArgumentError, bad);
  }
});

test("integers are strict", () => {
  const parse = integerParser(1, 100);
  assert.equal(parse("42"), 42);
  for (const bad of ["0", "101", "1.5", "", "abc", "12abc"])
    assert.throws(() => parse(bad), InvalidArgumentError, bad);
});

test("--config pairs accumulate; the value may hold '='", () => {
  let c = collectConfig("retention.ms=1000");
  c = collectConfig("x=a=b", c);
  assert.deepEqual(c, { "retention.ms": "1000", x: "a=b" });
  assert.throws(() => collectConfig("novalue"), InvalidArgumentError);
  assert.throws(() => collectConfig("=v"), InvalidArgumentError);
});

test("start positions", () => {
  assert.deepEqual(parseStartPosition("earliest"), { kind: "earliest" });
  assert.deepEqual(parseStartPosition("latest"), { kind: "latest" });
  assert.deepEqual(parseStartPosition("17"), { kind: "offset", offset: 17 });
  assert.deepEqual(parseStartPosition("@1700000000000"), { kind: "timestamp", timestampMs: 1700000000000 });
  for (const bad of ["", "-1", "@", "@x", "first", "1e3"]) {
    assert.throws(() => parseStartPosition(bad), InvalidArgumentError, bad);
  }
});

test("separators understand \\t", () => {
  assert.deepEqual(parseSeparator("\\t"), Buffer.from("\t"));
  assert.deepEqual(parseSeparator("::"), Buffer.from("::"));
  assert.throws(() => parseSeparator(""), InvalidArgumentError);
  assert.throws(() => parseSeparator("\\n"), InvalidArgumentError);
});

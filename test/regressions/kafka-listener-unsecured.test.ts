// With authorization on, the Kafka listener (which has no ACL checks yet) would serve everyone beside
// the locked native listeners: the broker refuses to start with it. Logins it enforces.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveBrokerConfig } from "../../src/broker/broker-config.js";
import { checkKafkaSecurity } from "../../src/cli/broker-runner.js";

test("the broker will not serve Kafka unsecured beside secured native listeners", () => {
  const base = { dataDir: "/tmp/unused" };
  assert.doesNotThrow(() => checkKafkaSecurity(resolveBrokerConfig(base)));
  assert.doesNotThrow(() => checkKafkaSecurity(resolveBrokerConfig({ ...base, authentication: "required" })));
  assert.throws(
    () => checkKafkaSecurity(resolveBrokerConfig({ ...base, authorization: "on" })),
    /--authorization on cannot be enforced on the Kafka listener yet/,
  );
  assert.doesNotThrow(() =>
    checkKafkaSecurity(
      resolveBrokerConfig({ ...base, kafka: false, authentication: "required", authorization: "on" }),
    ),
  );
});

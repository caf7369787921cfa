import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import { ErrorCode } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { requestApiVersion } from "../../src/protocol/frame.js";
import { FakeBroker } from "./fake-broker.js";

test("against a broker that knows only DescribeTopic version 1, the admin's describe and a producer's partition count fall back to it", async (t) => {
  const fake = await FakeBroker.start(t, (req) => {
    if (req.apiKey !== ApiKey.DESCRIBE_TOPIC) return;
    if (requestApiVersion(req.frame) > 1)
      req.conn.error(req.correlationId, ErrorCode.UNSUPPORTED_VERSION, "DescribeTopic version 1 only");
    else req.conn.describeTopic(req, 3);
  });
  const client = createClient({ brokers: [fake.address] });
  t.after(() => client.close());
  const described = await client.admin().describeTopic("t");
  assert.equal(described.partitions.length, 3);
  assert.equal(described.partitions[0]!.figuresKnown, undefined, "a version 1 answer");
  await client.producer().connect(["t"]);
  const asked = fake.requests
    .filter((r) => r.apiKey === ApiKey.DESCRIBE_TOPIC)
    .map((r) => requestApiVersion(r.frame));
  assert.deepEqual(asked, [3, 2, 1, 3, 2, 1], "each lookup asks the newest version first");
});

/**
 * `conch group list|describe` and the SDK's group admin tell a Kafka group from a native one: a
 * kafkajs group and a native group live on one broker at once, and each shows its kind (and the
 * Kafka group its protocol type). A client that asks at version 1 still gets version 1's bytes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Consumer } from "kafkajs";
import { GroupConsumer } from "../../../src/client/group-consumer.js";
import { type Conch, createClient } from "../../../src/index.js";
import {
  decodeDescribeGroupResponse,
  encodeDescribeGroupRequest,
} from "../../../src/protocol/describe-group.js";
import { decodeListGroupsResponse, encodeListGroupsRequest } from "../../../src/protocol/list-groups.js";
import { CONCH } from "../../cli/cli-harness.js";
import { TestClient } from "../../server/helpers.js";
import { runTool, startKafka } from "./kafka-harness.js";
import { TestClients } from "./test-clients.js";

test("a kafkajs group and a native group side by side: list and describe show each one's kind", async (t) => {
  const clients = new TestClients(t);
  const f = await startKafka(t);
  await f.broker.createTopic("orders", 2);

  const kafka = clients.kafkajs(f.bootstrap, { clientId: "kind-test" });
  const consumer = kafka.consumer({ groupId: "kgroup", sessionTimeout: 10_000, heartbeatInterval: 500 });
  const native = new GroupConsumer(
    { brokers: [f.native], clientId: "reader" },
    { group: "ngroup", topics: ["orders"] },
  );
  clients.closeBeforeBroker(() => native.close());
  const client = createClient({ brokers: [f.native] });
  clients.closeBeforeBroker(() => client.close());
  const raw = await TestClient.connect(Number(f.native.split(":")[1]));
  clients.closeBeforeBroker(async () => raw.socket.destroy());
  await sideBySide(f.native, consumer, native, client, raw);
});

async function sideBySide(
  address: string,
  consumer: Consumer,
  native: GroupConsumer,
  client: Conch,
  raw: TestClient,
): Promise<void> {
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topics: ["orders"] });
  await consumer.run({ eachMessage: async () => {} });
  await joined;

  await native.ready();

  const list = await runTool(process.execPath, [CONCH, "group", "list", "-b", address]);
  assert.equal(list.code, 0, list.stderr);
  const rows = list.stdout.toString().trim().split("\n");
  assert.match(rows[0]!, /^GROUP +KIND +STATE +MEMBERS$/);
  assert.match(rows[1]!, /^kgroup +kafka \(consumer\) +Stable +1$/);
  assert.match(rows[2]!, /^ngroup +native +Stable +1$/);
  assert.equal(rows.length, 3);

  const json = await runTool(process.execPath, [CONCH, "group", "list", "--json", "-b", address]);
  const groups = json.stdout
    .toString()
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { group: string; kind: string; protocolType: string });
  assert.deepEqual(
    groups.map((g) => [g.group, g.kind, g.protocolType]),
    [
      ["kgroup", "kafka", "consumer"],
      ["ngroup", "native", ""],
    ],
  );

  for (const [group, kind] of [
    ["kgroup", "kafka (consumer)"],
    ["ngroup", "native"],
  ] as const) {
    const described = await runTool(process.execPath, [CONCH, "group", "describe", group, "-b", address]);
    assert.equal(described.code, 0, described.stderr);
    assert.ok(described.stdout.toString().includes(`\nkind: ${kind}\n`), described.stdout.toString());
  }

  const info = await client.groups().describeGroup("kgroup");
  assert.equal(info.kind, "kafka");
  assert.equal(info.protocolType, "consumer");
  assert.equal(info.members.length, 1);

  // Version 1 is answered as before: its decoders read the whole frame, so an extra byte would throw.
  await raw.handshake();
  const v1List = decodeListGroupsResponse(await raw.call((id) => encodeListGroupsRequest(id)));
  assert.deepEqual(
    v1List.groups.map((g) => g.group),
    ["kgroup", "ngroup"],
  );
  assert.ok(!("kind" in v1List.groups[0]!));
  const v1Described = decodeDescribeGroupResponse(
    await raw.call((id) => encodeDescribeGroupRequest(id, { group: "kgroup" })),
  );
  assert.equal(v1Described.members.length, 1);
}

/**
 * Every request the ACLs guard, refused without a rule and served with one, on the native
 * protocol (raw frames; the connection is User:ANONYMOUS, logins not required).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import { responseErrorCode } from "../../src/protocol/frame.js";
import * as p from "../../src/protocol/index.js";
import type { Operation, ResourceType } from "../../src/security/acl-rule.js";
import { AclStore } from "../../src/security/acl-store.js";
import { batchOf, TestClient } from "../server/helpers.js";
import { startSecureServer } from "./secure-server.js";

interface Case {
  name: string;
  encode: (id: number) => Buffer;
  /** The rules that allow it, as operation/type/name. */
  needs: Array<[Operation, ResourceType, string]>;
}

const TOPIC = "orders";
const GROUP = "billing";

const cases: Case[] = [
  {
    name: "CreateTopic (create on the topic)",
    encode: (id) => p.encodeCreateTopicRequest(id, { topic: "new-topic", partitions: 1, configs: {} }),
    needs: [["create", "topic", "new-topic"]],
  },
  {
    name: "CreateTopic (create on the cluster)",
    encode: (id) => p.encodeCreateTopicRequest(id, { topic: "other-topic", partitions: 1, configs: {} }),
    needs: [["create", "cluster", "cluster"]],
  },
  {
    name: "DescribeTopic",
    encode: (id) => p.encodeDescribeTopicRequest(id, { topic: TOPIC }),
    needs: [["describe", "topic", TOPIC]],
  },
  {
    name: "Produce",
    encode: (id) =>
      p.encodeProduceRequest(id, {
        topic: TOPIC,
        partition: 0,
        acks: 1,
        timeoutMs: 1000,
        records: batchOf(["x"]),
      }),
    needs: [["write", "topic", TOPIC]],
  },
  {
    name: "Produce version 2 (many partitions)",
    encode: (id) =>
      p.encodeMultiProduceRequest(id, {
        topic: TOPIC,
        acks: 1,
        timeoutMs: 1000,
        partitions: [
          { partition: 0, records: batchOf(["x"]) },
          { partition: 0, records: batchOf(["y"]) },
        ],
      }),
    needs: [["write", "topic", TOPIC]],
  },
  {
    name: "Fetch",
    encode: (id) =>
      p.encodeFetchRequest(id, {
        topic: TOPIC,
        partition: 0,
        offset: 0,
        maxBytes: 1024,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    needs: [["read", "topic", TOPIC]],
  },
  {
    name: "ListOffsets",
    encode: (id) => p.encodeListOffsetsRequest(id, { topic: TOPIC, partition: 0, spec: 1, timestampMs: 0 }),
    needs: [["read", "topic", TOPIC]],
  },
  {
    name: "AlterTopic",
    encode: (id) => p.encodeAlterTopicRequest(id, { topic: TOPIC, configs: { "retention.ms": "100000" } }),
    needs: [["alter", "topic", TOPIC]],
  },
  {
    name: "CreatePartitions",
    encode: (id) => p.encodeCreatePartitionsRequest(id, { topic: TOPIC, partitions: 2 }),
    needs: [["alter", "topic", TOPIC]],
  },
  {
    name: "JoinGroup",
    encode: (id) =>
      p.encodeJoinGroupRequest(id, {
        group: GROUP,
        memberId: "",
        clientId: "t",
        topics: [TOPIC],
        strategy: "range",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 100,
      }),
    needs: [["read", "group", GROUP]],
  },
  {
    name: "Heartbeat",
    encode: (id) => p.encodeHeartbeatRequest(id, { group: GROUP, memberId: "m", generation: 1 }),
    needs: [["read", "group", GROUP]],
  },
  {
    name: "LeaveGroup",
    encode: (id) => p.encodeLeaveGroupRequest(id, { group: GROUP, memberId: "m" }),
    needs: [["read", "group", GROUP]],
  },
  {
    name: "CommitOffsets",
    encode: (id) =>
      p.encodeCommitOffsetsRequest(id, {
        group: "idle",
        memberId: "",
        generation: 0,
        offsets: [{ topic: TOPIC, partition: 0, offset: 0 }],
      }),
    needs: [
      ["read", "group", "idle"],
      ["read", "topic", TOPIC],
    ],
  },
  {
    name: "FetchOffsets",
    encode: (id) =>
      p.encodeFetchOffsetsRequest(id, { group: GROUP, partitions: [{ topic: TOPIC, partition: 0 }] }),
    needs: [["read", "group", GROUP]],
  },
  {
    name: "DescribeGroup",
    encode: (id) => p.encodeDescribeGroupRequest(id, { group: GROUP }),
    needs: [["describe", "group", GROUP]],
  },
  {
    name: "ResetOffsets",
    encode: (id) => p.encodeResetOffsetsRequest(id, { group: "idle", topic: TOPIC, to: 0, value: 0 }),
    needs: [
      ["read", "group", "idle"],
      ["read", "topic", TOPIC],
    ],
  },
  {
    name: "DeleteGroup",
    encode: (id) => p.encodeDeleteGroupRequest(id, { group: "idle" }),
    needs: [["delete", "group", "idle"]],
  },
  {
    name: "DeleteTopic",
    encode: (id) => p.encodeDeleteTopicRequest(id, { topic: TOPIC }),
    needs: [["delete", "topic", TOPIC]],
  },
];

const REFUSED: Record<ResourceType, number> = {
  topic: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster: ErrorCode.TOPIC_AUTHORIZATION_FAILED, // CreateTopic falls back to the topic's rule
};

const rule = ([operation, resourceType, name]: [Operation, ResourceType, string]) => ({
  principal: "User:ANONYMOUS",
  permission: "allow" as const,
  operation,
  resourceType,
  patternType: "literal" as const,
  name,
});

test("every guarded request is refused without a rule and served with one", async (t) => {
  const f = await startSecureServer(t, { authorization: "on" });
  await f.broker.createTopic(TOPIC, 1);
  const acls = await AclStore.open(f.broker.config.dataDir);
  const c = await TestClient.connect(f.port);
  t.after(() => c.destroy());
  await c.handshake();
  for (const k of cases) {
    await f.server.reloadSecurity();
    const refused = responseErrorCode(await c.call(k.encode));
    assert.equal(
      refused,
      REFUSED[k.needs[0]![2] === "cluster" ? "cluster" : k.needs[0]![1]],
      `${k.name} without a rule`,
    );
    await acls.add(k.needs.map(rule));
    await f.server.reloadSecurity();
    const served = responseErrorCode(await c.call(k.encode));
    assert.ok(
      served !== ErrorCode.TOPIC_AUTHORIZATION_FAILED && served !== ErrorCode.GROUP_AUTHORIZATION_FAILED,
      `${k.name} with ${JSON.stringify(k.needs)}: code ${served}`,
    );
    await acls.remove({});
  }
});

test("a deny wins over an allow, lists show only what may be described, super users may do anything", async (t) => {
  const f = await startSecureServer(
    t,
    { authorization: "on", superUsers: ["User:admin"] },
    { users: { admin: "admin-password" } },
  );
  await f.broker.createTopic("visible", 1);
  await f.broker.createTopic("hidden", 1);
  const acls = await AclStore.open(f.broker.config.dataDir);
  await acls.add([
    rule(["write", "topic", "visible"]),
    { ...rule(["write", "topic", "hidden"]), patternType: "literal" },
    { ...rule(["write", "topic", "hidden"]), permission: "deny" },
  ]);
  await f.server.reloadSecurity();
  const anonymous = f.client({});
  // write implies describe: "visible" is listed; "hidden" is denied its write, so only describe
  // through the allow remains, and a deny of write does not deny describe (as in Kafka).
  assert.deepEqual((await anonymous.admin().listTopics()).sort(), ["hidden", "visible"]);
  const producer = anonymous.producer();
  await producer.send("visible", { value: "ok" });
  await assert.rejects(
    producer.send("hidden", { value: "no" }),
    (err: unknown) => (err as { code?: number }).code === ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  );
  await acls.remove({});
  await f.server.reloadSecurity();
  assert.deepEqual(await anonymous.admin().listTopics(), []);
  const admin = f.client({
    sasl: { mechanism: "scram-sha-512", username: "admin", password: "admin-password" },
  });
  assert.deepEqual((await admin.admin().listTopics()).sort(), ["hidden", "visible"]);
  await admin.admin().deleteTopic("hidden");
});

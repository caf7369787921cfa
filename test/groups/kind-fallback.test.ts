/**
 * Against a broker that predates ListGroups and DescribeGroup version 2 (it answers version 2 with
 * UNSUPPORTED_VERSION), the SDK asks again at version 1 and returns the groups without a kind, and
 * `conch group list` shows "-" for it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { listLines } from "../../src/cli/group-commands.js";
import { GroupConsumer } from "../../src/client/group-consumer.js";
import { createClient } from "../../src/index.js";
import { API_VERSION, ApiKey } from "../../src/protocol/api.js";
import { ConchServer } from "../../src/server/conch-server.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry } from "../../src/server/handler.js";
import { tempDir } from "./helpers.js";

test("the group admin falls back to version 1 against an older broker, without kinds", async (t) => {
  const broker = await Broker.open({ flush: "none", dataDir: await tempDir(t) });
  await broker.createTopic("orders", 2);
  const handlers: Array<HandlerEntry | undefined> = [...defaultHandlers()];
  for (const key of [ApiKey.LIST_GROUPS, ApiKey.DESCRIBE_GROUP]) {
    const entry = handlers[key]!;
    handlers[key] = { handle: entry.handle, version: API_VERSION[key] };
  }
  const server = new ConchServer(broker, { shutdownTimeoutMs: 1000, handlers });
  const { port } = await server.listen(0, "127.0.0.1");
  const brokers = [`127.0.0.1:${port}`];
  const member = new GroupConsumer({ brokers, clientId: "reader" }, { group: "g", topics: ["orders"] });
  const client = createClient({ brokers });
  // The clients, then the server, then the broker.
  t.after(async () => {
    await Promise.allSettled([client.close(), member.close()]);
    await server.close();
    await broker.close();
  });
  await member.ready();
  const groups = await client.groups().listGroups();
  assert.deepEqual(groups, [{ group: "g", state: "Stable", members: 1 }]);
  const info = await client.groups().describeGroup("g");
  assert.equal(info.kind, undefined);
  assert.equal(info.members.length, 1);
  assert.match(listLines(groups)[1]!, /^g +- +Stable +1$/);
});

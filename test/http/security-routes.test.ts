import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import { BrokerHttp } from "../../src/http/broker-http.js";
import { isCode } from "../security/helpers.js";
import { startSecureServer } from "../security/secure-server.js";
import { call as anonymousCall, basic, errorCode } from "./helpers.js";

test("users, ACLs and quotas change live through the admin API, durably", async (t) => {
  const f = await startSecureServer(
    t,
    { authentication: "required", authorization: "on", superUsers: ["User:admin"] },
    { users: { admin: "admin-password" } },
  );
  const http = new BrokerHttp({ secured: true });
  const { port } = await http.listen(0, "127.0.0.1");
  t.after(() => http.close());
  http.attach(f.broker);
  http.context.security = f.security;
  const base = `http://127.0.0.1:${port}`;
  const admin = basic("admin", "admin-password");
  const call = (b: string, method: string, path: string, body?: unknown) =>
    anonymousCall(b, method, path, body, admin);
  await f.broker.createTopic("orders", 1);

  // A user added now can log in at once; its password is never shown back.
  assert.equal(
    (await call(base, "POST", "/api/v1/users", { name: "carol", password: "carol-password" })).status,
    201,
  );
  const users = await call(base, "GET", "/api/v1/users");
  assert.equal(JSON.stringify(users.json).includes("carol-password"), false);
  assert.deepEqual(
    (users.json.users as Array<{ name: string }>).map((u) => u.name),
    ["admin", "carol"],
  );
  const taken = await call(base, "POST", "/api/v1/users", { name: "carol", password: "carol-password" });
  assert.equal(taken.status, 409);
  assert.equal(errorCode(taken.json), "USER_ALREADY_EXISTS");
  const carol = f.client({
    sasl: { mechanism: "scram-sha-256", username: "carol", password: "carol-password" },
  });
  // Logged in, but no rule yet: the topic is not even listed.
  assert.deepEqual(await carol.admin().listTopics(), []);

  // A rule added now applies to the next request of the open connection.
  const rule = {
    principal: "User:carol",
    permission: "allow",
    operation: "describe",
    resourceType: "topic",
    patternType: "literal",
    name: "orders",
  };
  assert.equal((await call(base, "POST", "/api/v1/acls", { rules: [rule] })).status, 201);
  assert.deepEqual(await carol.admin().listTopics(), ["orders"]);
  const removed = await call(base, "DELETE", "/api/v1/acls?principal=User:carol");
  assert.deepEqual(removed.json.removed, [rule]);
  assert.deepEqual(await carol.admin().listTopics(), []);

  // Quotas: set live, written to quotas.json, listed, removed.
  const set = await call(base, "PUT", "/api/v1/quotas/principals/User:carol", { produceBytesPerSec: 50_000 });
  assert.equal(set.status, 200);
  const file = JSON.parse(await readFile(join(f.broker.config.dataDir, "security", "quotas.json"), "utf8"));
  assert.deepEqual(file.principals, { "User:carol": { produceBytesPerSec: 50_000 } });
  assert.equal(f.security.throttling, true);
  const bad = await call(base, "PUT", "/api/v1/quotas/principals/*", { produceBytesPerSec: -1 });
  assert.equal(bad.status, 400);
  assert.equal((await call(base, "DELETE", "/api/v1/quotas/principals/User:carol")).status, 200);
  assert.equal(f.security.throttling, false);

  // A deleted user cannot log in again.
  assert.equal((await call(base, "DELETE", "/api/v1/users/carol")).status, 200);
  const again = f.client({
    sasl: { mechanism: "scram-sha-256", username: "carol", password: "carol-password" },
  });
  await assert.rejects(again.admin().listTopics(), isCode(ErrorCode.AUTHENTICATION_FAILED));
  assert.equal((await call(base, "DELETE", "/api/v1/users/carol")).status, 404);
});

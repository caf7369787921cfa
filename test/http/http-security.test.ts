import assert from "node:assert/strict";
import { request } from "node:http";
import { type TestContext, test } from "node:test";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { BrokerHttp, type BrokerHttpOptions } from "../../src/http/broker-http.js";
import type { AuthFailureLimiterOptions } from "../../src/security/auth-failure-limiter.js";
import { startSecureServer } from "../security/secure-server.js";
import { basic, call, errorCode } from "./helpers.js";

const ADMIN = basic("admin", "admin-password");
const BOB = basic("bob", "bob-password");

async function startSecureHttp(
  t: TestContext,
  config: Partial<BrokerConfig>,
  http: BrokerHttpOptions = {},
  limiter: AuthFailureLimiterOptions = {},
) {
  const f = await startSecureServer(
    t,
    { superUsers: ["User:admin"], ...config },
    { users: { admin: "admin-password", bob: "bob-password" }, limiter },
  );
  const server = new BrokerHttp({ secured: true, defaultMetrics: false, ...http });
  const { port } = await server.listen(0, "127.0.0.1");
  t.after(() => server.close());
  server.attach(f.broker);
  server.context.security = f.security;
  return { f, base: `http://127.0.0.1:${port}`, port };
}

/** A GET with a chosen Host header (fetch sets its own). */
function getWithHost(port: number, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

test("with --authentication required the admin API asks for a Basic login; health checks stay open", async (t) => {
  const { base } = await startSecureHttp(t, { authentication: "required" });
  const none = await call(base, "GET", "/api/v1/topics");
  assert.equal(none.status, 401);
  assert.equal(errorCode(none.json), "AUTHENTICATION_FAILED");
  assert.match(none.headers.get("www-authenticate") ?? "", /^Basic realm="conch"/);
  for (const headers of [
    basic("bob", "wrong-password"),
    basic("nobody", "bob-password"),
    { authorization: "Basic !!!not-base64" },
    { authorization: "Bearer abc" },
    { authorization: `Basic ${Buffer.from("no-colon").toString("base64")}` },
  ]) {
    const wrong = await call(base, "GET", "/api/v1/topics", undefined, headers);
    assert.equal(wrong.status, 401, JSON.stringify(headers));
    assert.equal(errorCode(wrong.json), "AUTHENTICATION_FAILED");
  }
  assert.equal((await call(base, "GET", "/api/v1/topics", undefined, BOB)).status, 200);
  assert.equal((await call(base, "GET", "/healthz")).status, 200);
  assert.equal((await call(base, "GET", "/readyz")).status, 200);
  // The console page too, so the browser asks on opening it and sends the login with its fetches.
  assert.equal((await fetch(`${base}/`)).status, 401);
  // /metrics asks for a login by default (--http-metrics login).
  assert.equal((await fetch(`${base}/metrics`)).status, 401);
  assert.equal((await fetch(`${base}/metrics`, { headers: BOB })).status, 200);
});

test("--http-metrics open serves /metrics without a login, and nothing else", async (t) => {
  const { base } = await startSecureHttp(t, { authentication: "required" }, { metricsOpen: true });
  assert.equal((await fetch(`${base}/metrics`)).status, 200);
  assert.equal((await call(base, "GET", "/api/v1/broker")).status, 401);
});

test("before the broker's security is open, a secured HTTP port serves health checks only", async (t) => {
  const f = await startSecureServer(t, { authentication: "required" }, { users: { bob: "bob-password" } });
  const server = new BrokerHttp({ secured: true, defaultMetrics: false });
  const { port } = await server.listen(0, "127.0.0.1");
  t.after(() => server.close());
  server.attach(f.broker);
  const base = `http://127.0.0.1:${port}`;
  const early = await call(base, "GET", "/api/v1/topics", undefined, BOB);
  assert.equal(early.status, 503);
  assert.equal((await call(base, "GET", "/healthz")).status, 200);
});

test("the failure limiter spaces HTTP password guesses per address", async (t) => {
  const { base } = await startSecureHttp(
    t,
    { authentication: "required" },
    {},
    { freeFailures: 1, baseDelayMs: 300, maxDelayMs: 300 },
  );
  const wrong = basic("bob", "guess");
  const first = performance.now();
  assert.equal((await call(base, "GET", "/api/v1/topics", undefined, wrong)).status, 401);
  assert.ok(performance.now() - first < 300, "the first failure is free");
  const started = performance.now();
  assert.equal((await call(base, "GET", "/api/v1/topics", undefined, wrong)).status, 401);
  assert.equal((await call(base, "GET", "/api/v1/topics", undefined, basic("admin", "guess"))).status, 401);
  // Past the free failure each answer is held, and the next attempt waits its slot: >= 2 x 300 ms.
  assert.ok(performance.now() - started >= 590, `${performance.now() - started} ms`);
});

interface RouteCase {
  method: string;
  path: string;
  body?: unknown;
  /** The rules that allow it (principal User:bob, allow, literal). */
  needs: Array<[operation: string, resourceType: string, name: string]>;
  status: number;
}

const CLUSTER = (operation: string): [string, string, string] => [operation, "cluster", "cluster"];

const ROUTES: RouteCase[] = [
  { method: "GET", path: "/api/v1/broker", needs: [CLUSTER("describe")], status: 200 },
  {
    method: "POST",
    path: "/api/v1/topics",
    body: { name: "made" },
    needs: [["create", "topic", "made"]],
    status: 201,
  },
  { method: "GET", path: "/api/v1/topics/orders", needs: [["describe", "topic", "orders"]], status: 200 },
  {
    method: "GET",
    path: "/api/v1/topics/orders/partitions",
    needs: [["describe", "topic", "orders"]],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/api/v1/topics/orders/configs",
    body: { configs: { "retention.ms": "60000" } },
    needs: [["alter", "topic", "orders"]],
    status: 200,
  },
  {
    method: "POST",
    path: "/api/v1/topics/orders/partitions",
    body: { partitions: 2 },
    needs: [["alter", "topic", "orders"]],
    status: 200,
  },
  {
    method: "GET",
    path: "/api/v1/topics/orders/partitions/0/messages",
    needs: [["read", "topic", "orders"]],
    status: 200,
  },
  {
    method: "POST",
    path: "/api/v1/groups/g1/reset-offsets",
    body: { topic: "orders", to: "earliest" },
    needs: [
      ["read", "group", "g1"],
      ["read", "topic", "orders"],
    ],
    status: 200,
  },
  { method: "GET", path: "/api/v1/groups/g1", needs: [["describe", "group", "g1"]], status: 200 },
  { method: "GET", path: "/api/v1/users", needs: [CLUSTER("describe")], status: 200 },
  {
    method: "POST",
    path: "/api/v1/users",
    body: { name: "carol", password: "carol-password" },
    needs: [CLUSTER("alter")],
    status: 201,
  },
  {
    method: "PUT",
    path: "/api/v1/users/carol/password",
    body: { password: "carol-password-2" },
    needs: [CLUSTER("alter")],
    status: 200,
  },
  { method: "DELETE", path: "/api/v1/users/carol", needs: [CLUSTER("alter")], status: 200 },
  { method: "GET", path: "/api/v1/acls", needs: [CLUSTER("describe")], status: 200 },
  {
    method: "POST",
    path: "/api/v1/acls",
    body: {
      rules: [
        {
          principal: "User:carol",
          permission: "allow",
          operation: "read",
          resourceType: "topic",
          patternType: "literal",
          name: "x",
        },
      ],
    },
    needs: [CLUSTER("alter")],
    status: 201,
  },
  { method: "DELETE", path: "/api/v1/acls?principal=User:carol", needs: [CLUSTER("alter")], status: 200 },
  { method: "GET", path: "/api/v1/quotas", needs: [CLUSTER("describe")], status: 200 },
  {
    method: "PUT",
    path: "/api/v1/quotas/principals/User:carol",
    body: { requestsPerSec: 100 },
    needs: [CLUSTER("alter")],
    status: 200,
  },
  { method: "DELETE", path: "/api/v1/quotas/principals/User:carol", needs: [CLUSTER("alter")], status: 200 },
  { method: "DELETE", path: "/api/v1/topics/orders", needs: [["delete", "topic", "orders"]], status: 200 },
];

const REFUSED: Record<string, string> = {
  topic: "TOPIC_AUTHORIZATION_FAILED",
  group: "GROUP_AUTHORIZATION_FAILED",
  cluster: "CLUSTER_AUTHORIZATION_FAILED",
};

function rule([operation, resourceType, name]: [string, string, string]) {
  return {
    principal: "User:bob",
    permission: "allow",
    operation,
    resourceType,
    patternType: "literal",
    name,
  };
}

test("with --authorization on every admin route is refused (403) without its ACL and served with it", async (t) => {
  const { f, base } = await startSecureHttp(t, { authentication: "required", authorization: "on" });
  await f.broker.createTopic("orders", 1);
  await f.broker.groups.commit("g1", "", 0, [{ topic: "orders", partition: 0, offset: 0 }]);
  for (const route of ROUTES) {
    const what = `${route.method} ${route.path}`;
    // Each rule it needs, missing in turn, refuses it with that resource type's code.
    for (let missing = 0; missing < route.needs.length; missing++) {
      const granted = route.needs.filter((_, i) => i !== missing).map(rule);
      if (granted.length > 0) await call(base, "POST", "/api/v1/acls", { rules: granted }, ADMIN);
      const refused = await call(base, route.method, route.path, route.body, BOB);
      assert.equal(refused.status, 403, what);
      assert.equal(errorCode(refused.json), REFUSED[route.needs[missing]![1]], what);
      await call(base, "DELETE", "/api/v1/acls?principal=User:bob", undefined, ADMIN);
    }
    await call(base, "POST", "/api/v1/acls", { rules: route.needs.map(rule) }, ADMIN);
    const served = await call(base, route.method, route.path, route.body, BOB);
    assert.equal(served.status, route.status, `${what}: ${JSON.stringify(served.json)}`);
    await call(base, "DELETE", "/api/v1/acls?principal=User:bob", undefined, ADMIN);
  }
});

test("topic and group lists show only what the principal may describe; create on the cluster creates any topic", async (t) => {
  const { f, base } = await startSecureHttp(t, { authentication: "required", authorization: "on" });
  await f.broker.createTopic("orders", 1);
  await f.broker.createTopic("payments", 1);
  for (const group of ["g1", "g2"]) {
    await f.broker.groups.commit(group, "", 0, [{ topic: "orders", partition: 0, offset: 0 }]);
  }
  const names = async (path: string, field: string, key: string) =>
    ((await call(base, "GET", path, undefined, BOB)).json[field] as Array<Record<string, string>>).map(
      (x) => x[key],
    );
  assert.deepEqual(await names("/api/v1/topics", "topics", "name"), []);
  assert.deepEqual(await names("/api/v1/groups", "groups", "group"), []);
  const rules = [rule(["describe", "topic", "orders"]), rule(["describe", "group", "g2"])];
  await call(base, "POST", "/api/v1/acls", { rules }, ADMIN);
  assert.deepEqual(await names("/api/v1/topics", "topics", "name"), ["orders"]);
  assert.deepEqual(await names("/api/v1/groups", "groups", "group"), ["g2"]);
  await call(base, "POST", "/api/v1/acls", { rules: [rule(CLUSTER("create"))] }, ADMIN);
  assert.equal((await call(base, "POST", "/api/v1/topics", { name: "any-name" }, BOB)).status, 201);
});

test("the Host header must name the HTTP port (DNS rebinding)", async (t) => {
  const { port } = await startSecureHttp(t, {});
  assert.equal(await getWithHost(port, "/api/v1/topics", `127.0.0.1:${port}`), 200);
  assert.equal(await getWithHost(port, "/api/v1/topics", `localhost:${port}`), 200);
  assert.equal(await getWithHost(port, "/api/v1/topics", `rebound.example:${port}`), 421);
  assert.equal(await getWithHost(port, "/healthz", "rebound.example"), 421);
  const named = await startSecureHttp(t, {}, { hostNames: ["conch.example"] });
  assert.equal(await getWithHost(named.port, "/api/v1/topics", `Conch.Example:${named.port}`), 200);
  assert.equal(await getWithHost(named.port, "/api/v1/topics", "other.example"), 421);
  const any = await startSecureHttp(t, {}, { hostNames: ["*"] });
  assert.equal(await getWithHost(any.port, "/api/v1/topics", "other.example"), 200);
});

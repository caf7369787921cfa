/** docs/grafana-dashboard.json reads only metrics that /metrics serves. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { batchOf } from "../broker/helpers.js";
import { dashboardQueries, metricNames, templateQueries } from "./dashboard-queries.js";
import { startHttp } from "./helpers.js";

test("every metric name the Grafana dashboard uses exists in /metrics", async (t) => {
  const { broker, base } = await startHttp(t);
  // Traffic and a committed group, so that series which exist only once used are there too.
  await broker.createTopic("orders", 1);
  await broker.produce("orders", 0, batchOf(["a", "b"]), "durable");
  await broker.fetch({
    topic: "orders",
    partition: 0,
    offset: 0,
    maxBytes: 1 << 20,
    minBytes: 0,
    maxWaitMs: 0,
  });
  await broker.groups.commit("billing", "", 0, [{ topic: "orders", partition: 0, offset: 0 }]);
  await broker.groups.resetOffsets("billing", "orders", { to: "earliest" });
  await broker
    .fetch({ topic: "missing", partition: 0, offset: 0, maxBytes: 1 << 20, minBytes: 0, maxWaitMs: 0 })
    .catch(() => {});
  const text = await (await fetch(`${base}/metrics`)).text();
  const served = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (m) served.add(m[1]!);
  }
  const queries = [...dashboardQueries(), ...templateQueries()];
  assert.ok(queries.length >= 20, "the dashboard has its panels");
  const used = new Set(queries.flatMap(metricNames));
  assert.ok(used.size >= 20);
  for (const name of used) assert.ok(served.has(name), `${name} (used by the dashboard) is in /metrics`);
});

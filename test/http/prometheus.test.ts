/**
 * A real Prometheus (Debian's package, our own process on a free port with a temp config and
 * storage) scrapes the broker every second; its query API shows that Conch's metrics arrive, and
 * every query of docs/grafana-dashboard.json runs on it. Skipped with a reason when prometheus is
 * not installed, except in CI (CI=true), where .ci/run installs it.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { batchOf } from "../broker/helpers.js";
import { asPromQL, dashboardQueries, templateQueries } from "./dashboard-queries.js";
import { startHttp } from "./helpers.js";

const PROMETHEUS = "/usr/bin/prometheus";
/** Prometheus starts, scrapes and answers within this on a loaded machine. */
const WAIT_MS = 60_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

async function query(api: string, promql: string): Promise<QueryAnswer> {
  const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
  return (await res.json()) as QueryAnswer;
}

/** Polls `check` every 250 ms until it returns true, failing with `what` after WAIT_MS. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function startPrometheus(t: TestContext, target: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "conch-prometheus-"));
  const port = await freePort();
  await writeFile(
    join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      "  - job_name: conch",
      `    static_configs: [{ targets: ["${target}"] }]`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (b: Buffer) => {
    log = (log + b.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  t.after(async () => {
    child.kill("SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${port}`;
  await until(`prometheus to be ready (its log: ${log})`, async () => (await fetch(`${api}/-/ready`)).ok);
  return api;
}

test("Prometheus scrapes the broker: conch metrics arrive, and the dashboard's queries run", async (t) => {
  if (!existsSync(PROMETHEUS)) {
    const why = `${PROMETHEUS} is not installed (apt-get install prometheus)`;
    if (process.env.CI === "true") throw new Error(`${why}, but CI=true: .ci/run should have installed it`);
    return t.skip(why);
  }
  const { broker, http } = await startHttp(t);
  await broker.createTopic("orders", 2);
  await broker.produce("orders", 1, batchOf(["a", "b", "c"]), "durable");
  await broker.groups.commit("billing", "", 0, [{ topic: "orders", partition: 0, offset: 0 }]);
  await broker.groups.resetOffsets("billing", "orders", { to: "earliest" });
  const { port } = http.address();
  const api = await startPrometheus(t, `127.0.0.1:${port}`);

  await until("the target to be up", async () => {
    const up = await query(api, 'up{job="conch"}');
    return up.data?.result[0]?.value[1] === "1";
  });
  await until("conch_partition_messages_in_total of orders/1 to be 3", async () => {
    const r = await query(api, 'conch_partition_messages_in_total{topic="orders",partition="1"}');
    return r.data?.result[0]?.value[1] === "3";
  });
  const lag = await query(api, 'sum by (group) (conch_group_lag{topic="orders"})');
  assert.deepEqual(
    lag.data?.result.map((r) => [r.metric.group, r.value[1]]),
    [["billing", "3"]],
  );
  // The produce, and the group's commit (an append to the internal offsets topic).
  const latency = await query(api, "conch_produce_latency_seconds_count");
  assert.ok(Number(latency.data?.result[0]?.value[1]) >= 1, JSON.stringify(latency));

  for (const expr of [...dashboardQueries(), ...templateQueries()]) {
    if (expr.startsWith("label_values(")) continue; // Grafana's own function, not PromQL.
    const r = await query(api, asPromQL(expr));
    assert.equal(r.status, "success", `the dashboard query ${expr} runs: ${r.error ?? ""}`);
  }
});

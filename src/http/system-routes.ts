/** /healthz, /readyz, /metrics, /api/v1/broker and /api/v1/events. */
import { readFileSync } from "node:fs";
import type { Registry } from "prom-client";
import { BROKER_SETTINGS } from "../broker/broker-settings.js";
import type { EventFeed } from "./event-feed.js";
import type { HttpContext } from "./http-context.js";
import type { ReadinessProbe } from "./readiness.js";
import type { Route } from "./router.js";

const VERSION = readVersion();

function readVersion(): string {
  try {
    // dist/src/http/ -> the package root.
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

export function systemRoutes(
  context: HttpContext,
  readiness: ReadinessProbe,
  registry: Registry,
  events: EventFeed,
): Route[] {
  return [
    {
      method: "GET",
      path: "/healthz",
      access: "open",
      handler: () => ({ status: 200, body: { status: "ok" } }),
    },
    {
      method: "GET",
      path: "/readyz",
      access: "open",
      handler: async () => {
        const r = await readiness.check();
        return {
          status: r.ready ? 200 : 503,
          body: { status: r.ready ? "ready" : "not ready", checks: r.checks },
        };
      },
    },
    {
      method: "GET",
      path: "/metrics",
      access: "metrics",
      handler: async ({ res }) => {
        const text = await registry.metrics();
        res.writeHead(200, {
          "content-type": registry.contentType,
          "content-length": Buffer.byteLength(text),
        });
        res.end(text);
        return null;
      },
    },
    {
      method: "GET",
      path: "/api/v1/broker",
      access: { operation: "describe", cluster: true },
      handler: () => {
        const broker = context.requireBroker();
        const settings: Record<string, unknown> = {};
        for (const s of BROKER_SETTINGS) settings[s.key] = broker.config[s.key];
        const listeners: Record<string, { listening: boolean; connections: number }> = {};
        for (const [name, probe] of context.listeners) {
          listeners[name] = { listening: probe.listening(), connections: probe.connections() };
        }
        return {
          status: 200,
          body: {
            version: VERSION,
            pid: process.pid,
            uptimeSeconds: Math.round((Date.now() - context.startedAtMs) / 1000),
            dataDir: broker.dataDir,
            topics: broker.listTopics().length,
            listeners,
            settings,
          },
        };
      },
    },
    {
      method: "GET",
      path: "/api/v1/events",
      access: { operation: "describe", cluster: true },
      handler: ({ res }) => {
        events.open(res);
        return null;
      },
    },
  ];
}

/**
 * The broker's HTTP port, put together: metrics, health, the admin API, the event feed and the web
 * console on one listener (docs/http-api.md, docs/console.md). It starts before the broker is open, so /healthz answers during
 * recovery; `attach` hands it the broker, `stopping` takes it away at shutdown (so /readyz turns
 * 503 while connections drain).
 *
 *   const http = new BrokerHttp({ logger });
 *   await http.listen(7421, "127.0.0.1");
 *   http.attach(broker);
 *   http.addListener("conch", { listening: () => ..., connections: () => server.connectionCount });
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Broker } from "../broker/broker.js";
import { createMetricsRegistry } from "./broker-metrics.js";
import { consoleRoutes } from "./console-routes.js";
import { EventFeed } from "./event-feed.js";
import { groupRoutes } from "./group-routes.js";
import { HttpAccess } from "./http-access.js";
import { HttpContext, type ListenerProbe } from "./http-context.js";
import { HttpServer } from "./http-server.js";
import { ReadinessProbe } from "./readiness.js";
import { securityRoutes } from "./security-routes.js";
import { systemRoutes } from "./system-routes.js";
import { topicRoutes } from "./topic-routes.js";

export interface BrokerHttpOptions {
  logger?: Logger;
  /** Snapshot interval of the event feed (default 1000 ms). */
  eventIntervalMs?: number;
  /** prom-client's default process metrics (default true). */
  defaultMetrics?: boolean;
  /** Authentication or authorization is on: nothing but health checks is served before security opens. */
  secured?: boolean;
  /** Serve /metrics without a login even with --authentication required. */
  metricsOpen?: boolean;
  /** Names the port answers to besides its addresses ("*": any; host-check.ts). */
  hostNames?: readonly string[];
}

export class BrokerHttp {
  readonly context = new HttpContext();
  readonly registry: Registry;
  readonly events: EventFeed;
  readonly #server: HttpServer;

  constructor(options: BrokerHttpOptions = {}) {
    const readiness = new ReadinessProbe(this.context);
    this.events = new EventFeed(this.context, options.eventIntervalMs);
    const access = new HttpAccess(this.context, options);
    this.#server = new HttpServer({
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.hostNames === undefined ? {} : { hostNames: options.hostNames }),
      authorize: (req, route, params) => access.check(req, route, params),
    });
    this.registry = createMetricsRegistry(this.context, {
      httpErrors: this.#server.errors,
      defaultMetrics: options.defaultMetrics ?? true,
    });
    this.#server.setRoutes([
      ...systemRoutes(this.context, readiness, this.registry, this.events),
      ...topicRoutes(this.context),
      ...groupRoutes(this.context),
      ...consoleRoutes(),
      ...securityRoutes(this.context),
    ]);
    this.context.listeners.set("http", {
      listening: () => this.#server.listening,
      connections: () => this.#server.connectionCount,
    });
  }

  listen(port: number, host: string) {
    return this.#server.listen(port, host);
  }

  address() {
    return this.#server.address();
  }

  attach(broker: Broker): void {
    this.context.attach(broker);
  }

  addListener(name: string, probe: ListenerProbe): void {
    this.context.listeners.set(name, probe);
  }

  /** Readiness fails and admin calls answer SHUTTING_DOWN from now on (the broker is closing). */
  stopping(): void {
    this.context.stopping();
  }

  async close(): Promise<void> {
    this.events.close();
    await this.#server.close();
  }
}

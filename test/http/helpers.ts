import type { TestContext } from "node:test";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { BrokerHttp } from "../../src/http/broker-http.js";
import { openBroker } from "../broker/helpers.js";

/** A broker and its HTTP port on 127.0.0.1 port 0, both closed when the test ends. */
export async function startHttp(t: TestContext, eventIntervalMs = 50, config: Partial<BrokerConfig> = {}) {
  const { broker, dataDir } = await openBroker(t, config);
  const http = new BrokerHttp({ eventIntervalMs });
  const { port } = await http.listen(0, "127.0.0.1");
  http.attach(broker);
  t.after(() => http.close());
  const base = `http://127.0.0.1:${port}`;
  return { broker, dataDir, http, base };
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { ...headers, "content-type": "application/json" };
  }
  const res = await fetch(base + path, init);
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** The Authorization header of an HTTP Basic login. */
export function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

export function errorCode(json: Record<string, unknown>): string {
  return (json.error as { code: string }).code;
}

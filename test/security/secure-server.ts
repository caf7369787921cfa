/** A broker with security (BrokerSecurity) on a temp dir: its plain and TLS listeners on port 0. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { pino } from "pino";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { type Conch, createClient } from "../../src/client/conch.js";
import type { ClientOptions } from "../../src/client/options.js";
import type { AuthFailureLimiterOptions } from "../../src/security/auth-failure-limiter.js";
import { UserStore } from "../../src/security/user-store.js";
import { BrokerSecurity } from "../../src/server/broker-security.js";
import { ConchServer } from "../../src/server/conch-server.js";
import type { ConchServerOptions } from "../../src/server/server-options.js";
import { makeCa, makeCert } from "./certificates.js";

export interface SecureFixture {
  dir: string;
  broker: Broker;
  server: ConchServer;
  security: BrokerSecurity;
  port: number;
  tlsPort: number;
  /** The CA that issued the broker's certificate (CN=localhost) and the client certificates. */
  caFile: string;
  /** A client, closed when the test ends. */
  client(options: Partial<ClientOptions> & { tlsListener?: boolean }): Conch;
}

/** Certificates: `ca`, the broker's `server` (CN=localhost), and client `alice` (CN=alice,O=acme). */
export async function startSecureServer(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
  options: {
    limiter?: AuthFailureLimiterOptions;
    users?: Record<string, string>;
    server?: ConchServerOptions;
  } = {},
): Promise<SecureFixture> {
  const dir = await mkdtemp(join(tmpdir(), "conch-secure-"));
  // A fixture that fails half-way (a bad setting, say) still removes its directory.
  const opened = await openSecure(dir, config, options).catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  const { broker, security, conch, port, tlsPort, caFile } = opened;
  const clients: Conch[] = [];
  t.after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    security.close();
    await conch.close();
    await broker.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir,
    broker,
    server: conch,
    security,
    port,
    tlsPort,
    caFile,
    client: ({ tlsListener, ...o }) => {
      const onTls = tlsListener ?? o.tls !== undefined;
      const c = createClient({
        brokers: [`127.0.0.1:${onTls ? tlsPort : port}`],
        connectTimeoutMs: 5000,
        requestTimeoutMs: 5000,
        ...o,
      });
      clients.push(c);
      return c;
    },
  };
}

/** The certificate files of a fixture's `certs` directory. */
export function certFile(fixture: SecureFixture, name: string, ext: "pem" | "key" = "pem"): string {
  return join(fixture.dir, "certs", `${name}.${ext}`);
}

async function openSecure(
  dir: string,
  config: Partial<BrokerConfig>,
  options: {
    limiter?: AuthFailureLimiterOptions;
    users?: Record<string, string>;
    server?: ConchServerOptions;
  },
) {
  const certs = join(dir, "certs");
  await import("node:fs/promises").then((fs) => fs.mkdir(certs));
  const caFile = makeCa(certs);
  const server = makeCert(certs, "server", "/CN=localhost", { ca: "ca" });
  makeCert(certs, "alice", "/C=US/O=acme/CN=alice", { ca: "ca" });
  const dataDir = join(dir, "data");
  if (options.users !== undefined) {
    const users = await UserStore.open(dataDir);
    for (const [name, password] of Object.entries(options.users)) await users.add(name, password);
  }
  const broker = await Broker.open({
    flush: "none",
    tlsCert: server.cert,
    tlsKey: server.key,
    tlsCa: caFile,
    ...config,
    dataDir,
  });
  const logger = pino({ enabled: false });
  const security = await BrokerSecurity.open(broker.config, logger, options.limiter ?? {});
  const conch = new ConchServer(broker, { shutdownTimeoutMs: 2000, security, ...options.server });
  const { port } = await conch.listen(0, "127.0.0.1");
  const { port: tlsPort } = await conch.listenTls(0, "127.0.0.1");
  return { broker, security, conch, port, tlsPort, caFile };
}

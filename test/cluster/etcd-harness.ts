/**
 * Starts a real etcd (1 or 3 members) for a cluster test: probed free loopback ports, data under
 * the temp directory, ready once /health says so, and a SIGKILL teardown that removes the data
 * (a graceful stop of the last member of a cluster can take over 10 s). Tests skip when no
 * `etcd` binary is installed (Debian: apt-get install etcd-server).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEtcdStore } from "../../src/cluster/etcd/etcd3-store.js";
import type { MetaStore } from "../../src/cluster/etcd/meta-store.js";

export function etcdInstalled(): boolean {
  return spawnSync("etcd", ["--version"], { stdio: "ignore" }).status === 0;
}

/** Why a cluster test is skipped here, or false when it can run (in CI it runs, and fails without etcd). */
export const skipWithoutEtcd: string | false =
  etcdInstalled() || process.env.CI === "true"
    ? false
    : "etcd is not installed (apt-get install etcd-server)";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** A probed port not already handed to another member of the same start. */
async function distinctFreePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** A member that exited before it was healthy: most often a probed port taken in between. */
class EtcdStartError extends Error {}

interface Member {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  process: ChildProcess | null;
}

export class EtcdCluster {
  readonly #dir: string;
  readonly #members: Member[];

  private constructor(dir: string, members: Member[]) {
    this.#dir = dir;
    this.#members = members;
  }

  /** `host:port` of every member's client listener. */
  get endpoints(): string[] {
    return this.#members.map((m) => `127.0.0.1:${m.clientPort}`);
  }

  /**
   * The ports are probed free (bind port 0, close) and then handed to etcd, so a concurrent test
   * can take one in between and the member exits at start: the start is tried again on fresh
   * ports, a few times, before it fails.
   */
  static async start(size: 1 | 3 = 1): Promise<EtcdCluster> {
    const attempts = 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await EtcdCluster.#startOnce(size);
      } catch (err) {
        if (attempt >= attempts || !(err instanceof EtcdStartError)) throw err;
      }
    }
  }

  static async #startOnce(size: 1 | 3): Promise<EtcdCluster> {
    const dir = await mkdtemp(join(tmpdir(), "conch-etcd-"));
    const members: Member[] = [];
    const taken = new Set<number>();
    for (let i = 0; i < size; i++) {
      members.push({
        name: `m${i}`,
        clientPort: await distinctFreePort(taken),
        peerPort: await distinctFreePort(taken),
        process: null,
      });
    }
    const cluster = new EtcdCluster(dir, members);
    try {
      for (let i = 0; i < size; i++) cluster.#spawn(i);
      await Promise.all(members.map((m) => waitHealthy(m, 20_000)));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  #spawn(i: number): void {
    const m = this.#members[i];
    if (m === undefined) throw new Error(`no member ${i}`);
    const initial = this.#members.map((x) => `${x.name}=http://127.0.0.1:${x.peerPort}`).join(",");
    const client = `http://127.0.0.1:${m.clientPort}`;
    const peer = `http://127.0.0.1:${m.peerPort}`;
    m.process = spawn(
      "etcd",
      [
        `--name=${m.name}`,
        `--data-dir=${join(this.#dir, m.name)}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${initial}`,
        "--initial-cluster-state=new",
        "--initial-cluster-token=conch-test",
        "--logger=zap",
        "--log-level=error",
      ],
      { stdio: ["ignore", "ignore", "ignore"] },
    );
  }

  /** The index (into endpoints) of the member that is the Raft leader now. */
  async leaderIndex(): Promise<number> {
    for (let i = 0; i < this.#members.length; i++) {
      const m = this.#members[i];
      if (m === undefined) continue;
      const res = await fetch(`http://127.0.0.1:${m.clientPort}/v3/maintenance/status`, {
        method: "POST",
        body: "{}",
      }).catch(() => null);
      if (res === null) continue;
      const body = (await res.json()) as { header?: { member_id?: string }; leader?: string };
      if (body.leader !== undefined && body.header?.member_id === body.leader) return i;
    }
    throw new Error("no etcd member says it leads");
  }

  /** SIGKILLs one member (index into endpoints). */
  kill(i: number): void {
    this.#members[i]?.process?.kill("SIGKILL");
  }

  /** SIGSTOP (paused) or SIGCONT (resumed) to one member: a paused member answers nothing and votes for no one. */
  pause(i: number, paused: boolean): void {
    this.#members[i]?.process?.kill(paused ? "SIGSTOP" : "SIGCONT");
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.#members.map(async (m) => {
        const p = m.process;
        if (p === null || p.exitCode !== null || p.signalCode !== null) return;
        const exited = new Promise((resolve) => p.once("exit", resolve));
        p.kill("SIGKILL");
        await exited;
      }),
    );
    await rm(this.#dir, { recursive: true, force: true });
  }
}

async function waitHealthy(m: Member, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const p = m.process;
    if (p !== null && (p.exitCode !== null || p.signalCode !== null)) {
      throw new EtcdStartError(`etcd member ${m.name} exited at start (code ${p.exitCode})`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${m.clientPort}/health`);
      const body = (await res.json()) as { health?: string };
      if (body.health === "true") return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until) throw new Error(`etcd member ${m.name} not healthy after ${timeoutMs} ms`);
    // Polling: etcd announces readiness on no channel a test can await.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A 1-member etcd and a store on it for a describe block: started before its tests, stopped after. */
export function etcdForSuite(
  before: (fn: () => Promise<void>) => void,
  after: (fn: () => Promise<void>) => void,
): { readonly etcd: EtcdCluster; readonly store: MetaStore } {
  const suite = {} as { etcd: EtcdCluster; store: MetaStore };
  before(async () => {
    suite.etcd = await EtcdCluster.start(1);
    suite.store = await openEtcdStore(suite.etcd.endpoints);
  });
  after(async () => {
    suite.store?.close();
    await suite.etcd?.stop();
  });
  return suite;
}

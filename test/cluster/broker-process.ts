/**
 * A `conch broker` in cluster mode as a child process, for tests and the failover measurement:
 * ports picked by the broker (0) unless given, data under a temp directory, JSON log lines read for the ports,
 * SIGKILL to end it (SIGTERM for a planned stop).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Set to a directory to keep every broker's log lines there (broker-<id>.log), for debugging. */
const LOG_DIR = process.env.CONCH_TEST_BROKER_LOGS;

const CONCH = new URL("../../../bin/conch.js", import.meta.url).pathname;

export interface BrokerProcessOptions {
  readonly brokerId: number;
  readonly etcd: readonly string[];
  readonly clusterId: string;
  readonly leaseTtlSeconds?: number;
  /** Reuse a data directory (a restart); a new temp one otherwise. */
  readonly dataDir?: string;
  /**
   * The native and Kafka ports (default 0: the broker picks). A restart passes the ports it had,
   * as a restarted broker keeps its address: clients' bootstrap lists stay good.
   */
  readonly port?: number;
  readonly kafkaPort?: number;
  /** Appends every log line of the broker to this file (a trace of a run). */
  readonly logFile?: string;
  /** Serve HTTP on a port the broker picks (default: no HTTP). */
  readonly http?: boolean;
  /** More `conch broker` flags (e.g. `--replica-lag-time-max-ms`). */
  readonly args?: readonly string[];
}

export class BrokerProcess {
  readonly brokerId: number;
  readonly dataDir: string;
  readonly port: number;
  readonly kafkaPort: number;
  /** 0 without `http`. */
  httpPort = 0;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** Its last log lines (JSON), for a failing test to show. */
  recent: readonly string[] = [];

  private constructor(
    brokerId: number,
    dataDir: string,
    child: ChildProcess,
    port: number,
    kafkaPort: number,
    exited: Promise<void>,
  ) {
    this.brokerId = brokerId;
    this.dataDir = dataDir;
    this.child = child;
    this.port = port;
    this.kafkaPort = kafkaPort;
    this.exited = exited;
  }

  static async start(o: BrokerProcessOptions): Promise<BrokerProcess> {
    const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), `conch-broker-${o.brokerId}-`)));
    const child = spawn(
      process.execPath,
      [
        CONCH,
        "broker",
        "--data-dir",
        dataDir,
        "--port",
        String(o.port ?? 0),
        "--kafka-port",
        String(o.kafkaPort ?? 0),
        ...(o.http === true ? ["--http-port", "0"] : ["--no-http"]),
        "--broker-id",
        String(o.brokerId),
        "--etcd",
        o.etcd.join(","),
        "--cluster-id",
        o.clusterId,
        "--lease-ttl-seconds",
        String(o.leaseTtlSeconds ?? 2),
        "--log-format",
        "json",
        ...(o.args ?? []),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let kafkaPort = 0;
    let httpPort = 0;
    const recent: string[] = [];
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
      const logFile =
        o.logFile ?? (LOG_DIR === undefined ? undefined : join(LOG_DIR, `broker-${o.brokerId}.log`));
      const trace = logFile === undefined ? null : createWriteStream(logFile, { flags: "a" });
      if (trace !== null) void exited.then(() => trace.end());
      lines.on("line", (line) => {
        trace?.write(`${line}\n`);
        recent.push(line);
        if (recent.length > 400) recent.shift();
        let entry: { msg?: string; port?: number };
        try {
          entry = JSON.parse(line) as { msg?: string; port?: number };
        } catch {
          return;
        }
        if (entry.msg?.startsWith("conch Kafka protocol") === true) kafkaPort = entry.port ?? 0;
        if (entry.msg?.startsWith("conch HTTP") === true) httpPort = entry.port ?? 0;
        if (entry.msg?.startsWith("conch broker listening") === true) resolve(entry.port ?? 0);
      });
      void exited.then(() => reject(new Error(`broker ${o.brokerId} exited before listening`)));
    });
    const broker = new BrokerProcess(o.brokerId, dataDir, child, port, kafkaPort, exited);
    broker.recent = recent;
    broker.httpPort = httpPort;
    return broker;
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGSTOP: the process stops at once, its sockets open and silent. */
  pause(): void {
    this.child.kill("SIGSTOP");
  }

  resume(): void {
    this.child.kill("SIGCONT");
  }

  /** SIGTERM (a planned stop: controlled shutdown); resolves once the process is gone. */
  async terminate(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    await this.exited;
  }

  async remove(): Promise<void> {
    await this.kill();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * What the console, `conch top` and Prometheus tests share: a real `conch broker` process with its
 * HTTP port (both on port 0), an SDK client for it, and Chromium when the machine has it.
 */
import { existsSync } from "node:fs";
import { after, before } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { type Conch, createClient } from "../../src/index.js";
import { BrokerProcess, removeDir, tempDir } from "../cli/cli-harness.js";

export const CHROMIUM = "/usr/bin/chromium";
export const IN_CI = process.env.CI === "true";

export interface LiveBroker {
  readonly process: BrokerProcess;
  /** "127.0.0.1:port" of the client listener. */
  readonly address: string;
  /** "http://127.0.0.1:port" of the HTTP port. */
  readonly base: string;
  /** "127.0.0.1:port" of the HTTP port. */
  readonly http: string;
  readonly client: Conch;
}

export async function startLiveBroker(dir: string, extraArgs: string[] = []): Promise<LiveBroker> {
  const process = await BrokerProcess.start(dir, extraArgs);
  const http = process.httpAddress;
  if (http === "") {
    await process.stop();
    throw new Error(`the broker logged no HTTP address:\n${process.logLines.join("\n")}`);
  }
  const client = createClient({ brokers: [process.address], clientId: "console-test" });
  return { process, address: process.address, base: `http://${http}`, http, client };
}

/** A broker for every test of a file: started before them, stopped and its data removed after. */
export function useLiveBroker(extraArgs: string[] = []): () => LiveBroker {
  let dir = "";
  let live: LiveBroker | undefined;
  before(async () => {
    dir = tempDir();
    live = await startLiveBroker(dir, extraArgs);
  });
  after(async () => {
    await live?.client.close();
    await live?.process.stop();
    removeDir(dir);
  });
  return () => {
    if (live === undefined) throw new Error("the broker is not started yet");
    return live;
  };
}

/**
 * Chromium through playwright-core (no browser download: Debian's package). Absent, the tests skip
 * with a reason, except in CI, where .ci/run installs it and its absence is a failure.
 */
export async function launchChromium(): Promise<Browser | string> {
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} is not installed (apt-get install chromium); the browser tests are skipped`;
    if (IN_CI) throw new Error(`${why}, but CI=true: .ci/run should have installed it`);
    return why;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Polls `check` until it returns true, failing with `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

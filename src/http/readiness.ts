/**
 * /readyz: the broker is ready when its data is recovered (it is open), every client listener
 * accepts connections, and the data directory takes a write: a small file written, fsynced and
 * removed. The disk probe is cached for a few seconds, so an orchestrator polling every second
 * costs one probe per interval, and bounded in time, so a hung disk answers "not ready" rather
 * than a hung request.
 */
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { HttpContext } from "./http-context.js";

/** A probe result is reused for this long. */
export const PROBE_CACHE_MS = 3000;
/** A probe that has not finished by then counts as failed. */
export const PROBE_TIMEOUT_MS = 2000;
export const PROBE_FILE = "conch.ready-probe";

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  ready: boolean;
  checks: ReadinessCheck[];
}

export class ReadinessProbe {
  readonly #context: HttpContext;
  #last: { atMs: number; error: string | null } | null = null;
  #running: Promise<string | null> | null = null;

  constructor(context: HttpContext) {
    this.#context = context;
  }

  async check(): Promise<Readiness> {
    const checks: ReadinessCheck[] = [];
    const broker = this.#context.broker;
    checks.push(
      broker === null
        ? { name: "data", ok: false, detail: this.#context.isStopping ? "shutting down" : "recovering" }
        : { name: "data", ok: true },
    );
    for (const [name, probe] of this.#context.listeners) {
      const ok = probe.listening();
      checks.push(
        ok ? { name: `listener:${name}`, ok } : { name: `listener:${name}`, ok, detail: "not listening" },
      );
    }
    if (broker !== null) {
      const error = await this.#disk(broker.dataDir);
      checks.push(error === null ? { name: "disk", ok: true } : { name: "disk", ok: false, detail: error });
    }
    return { ready: checks.every((c) => c.ok), checks };
  }

  /** null when the data directory took a write and an fsync, else why not. */
  async #disk(dataDir: string): Promise<string | null> {
    const last = this.#last;
    if (last !== null && Date.now() - last.atMs < PROBE_CACHE_MS) return last.error;
    this.#running ??= probeWithTimeout(dataDir).then((error) => {
      this.#last = { atMs: Date.now(), error };
      this.#running = null;
      return error;
    });
    return this.#running;
  }
}

async function probeWithTimeout(dataDir: string): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`no answer from the disk within ${PROBE_TIMEOUT_MS} ms`),
      PROBE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([probe(dataDir), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function probe(dataDir: string): Promise<string | null> {
  const path = join(dataDir, PROBE_FILE);
  try {
    const file = await open(path, "w");
    try {
      await file.write(`${Date.now()}\n`);
      await file.datasync();
    } finally {
      await file.close();
    }
    await unlink(path);
    return null;
  } catch (err) {
    return `cannot write to ${dataDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
}

/** Shared helpers of the security tests: temporary directories, a fake clock, file-op faults. */
import { ConchError } from "../../src/format/errors.js";
import { type DurableFileOps, defaultDurableFileOps } from "../../src/security/durable-file.js";

export { withTempDir } from "../storage/helpers.js";

export const isCode = (code: number) => (err: unknown) => err instanceof ConchError && err.code === code;

/** File ops that do the real thing until `failAt` names a step; that step then fails (once armed). */
export class FaultyFileOps implements DurableFileOps {
  failAt: "write-half" | "rename" | "sync-dir" | null = null;

  async writeSynced(path: string, data: Uint8Array): Promise<void> {
    if (this.failAt === "write-half") {
      // What a crash part-way through the write leaves: some of the bytes, then nothing.
      await defaultDurableFileOps.writeSynced(path, data.subarray(0, data.length >> 1));
      throw new Error("injected: disk full");
    }
    await defaultDurableFileOps.writeSynced(path, data);
  }

  async rename(from: string, to: string): Promise<void> {
    if (this.failAt === "rename") throw new Error("injected: rename failed");
    await defaultDurableFileOps.rename(from, to);
  }

  async syncDir(dir: string): Promise<void> {
    if (this.failAt === "sync-dir") throw new Error("injected: fsync failed");
    await defaultDurableFileOps.syncDir(dir);
  }
}

/** A clock the test moves by hand. */
export class FakeClock {
  ms = 1_000_000;
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** The body of the first ```json block after the heading `### <title>` in a markdown document. */
export function jsonBlockAfter(doc: string, title: string): string {
  const at = doc.indexOf(`\n### ${title}\n`);
  if (at < 0) throw new Error(`no "### ${title}" heading`);
  const m = /```json\n([\s\S]*?)```/.exec(doc.slice(at));
  if (m === null) throw new Error(`no json block after "### ${title}"`);
  return m[1]!;
}

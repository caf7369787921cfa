/**
 * One JSON document on disk under `<dataDir>/security/`, for the user and ACL stores: read and
 * validated once at open, rewritten whole (durable-file.ts) on every change. Changes run one at a
 * time in call order; a store updates its memory only after the file holds the change, so a
 * failed write leaves both as they were.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { ConchError, ErrorCode } from "../format/errors.js";
import {
  type DurableFileOps,
  defaultDurableFileOps,
  readBoundedFile,
  replaceFileDurably,
} from "./durable-file.js";

export const SECURITY_DIR = "security";
/** The most a store file may hold: tens of thousands of users or rules. */
export const MAX_STORE_FILE_BYTES = 16 * 1024 * 1024;

export interface StoreFileOptions {
  ops?: DurableFileOps;
  maxBytes?: number;
}

export class StoreFile {
  readonly path: string;
  readonly #ops: DurableFileOps;
  readonly #maxBytes: number;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(path: string, ops: DurableFileOps, maxBytes: number) {
    this.path = path;
    this.#ops = ops;
    this.#maxBytes = maxBytes;
  }

  /** Creates `<dataDir>/security/` if needed (durably) and returns the file `name` in it and its document. */
  static async open(
    dataDir: string,
    name: string,
    options: StoreFileOptions = {},
  ): Promise<{ file: StoreFile; document: unknown }> {
    const ops = options.ops ?? defaultDurableFileOps;
    const dir = join(dataDir, SECURITY_DIR);
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (made !== undefined) await ops.syncDir(dataDir);
    const file = new StoreFile(join(dir, name), ops, options.maxBytes ?? MAX_STORE_FILE_BYTES);
    const bytes = await readBoundedFile(file.path, file.#maxBytes, "security store");
    if (bytes === null) return { file, document: null };
    try {
      return { file, document: JSON.parse(bytes.toString("utf8")) as unknown };
    } catch (err) {
      throw file.invalid(`not JSON (${(err as Error).message})`);
    }
  }

  /** The error for a document that does not pass a store's checks: the broker must not start on it. */
  invalid(problem: string): ConchError {
    return new ConchError(ErrorCode.STORAGE_ERROR, `${this.path} is not a valid store file: ${problem}`);
  }

  /**
   * Runs `change` after every change before it: `change` computes the new document from the
   * store's memory, the file is replaced with it, then `apply` updates memory. Resolves with what
   * `change` returned.
   */
  update<T>(change: () => { document: object; result: T; apply: () => void }): Promise<T> {
    const run = this.#queue.then(async () => {
      const { document, result, apply } = change();
      const bytes = Buffer.from(`${JSON.stringify(document, null, 1)}\n`, "utf8");
      if (bytes.length > this.#maxBytes) {
        throw new ConchError(
          ErrorCode.INVALID_REQUEST,
          `${this.path} would grow past ${this.#maxBytes} bytes`,
        );
      }
      await replaceFileDurably(this.path, bytes, this.#ops);
      apply();
      return result;
    });
    this.#queue = run.catch(() => {});
    return run;
  }
}

/**
 * Producer ids for idempotent producers, unique across restarts (like Kafka's block allocator):
 * ids are handed out from a block whose end is made durable in the data directory before the
 * first of them goes out, so a restart starts after every block ever reserved. A crash skips the
 * rest of its block; an id is never handed out twice.
 *
 * The file `producer-ids` holds the first id not yet reserved, as 8 bytes big-endian.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConchError, ErrorCode } from "../format/errors.js";
import { MAX_PRODUCER_ID } from "../format/producer-fields.js";
import { readU64Safe, writeU64 } from "../format/u64.js";
import { writeFileAtomically } from "../storage/file-ops.js";

export const PRODUCER_IDS_FILE = "producer-ids";
/** Ids reserved per write of the file. */
export const PRODUCER_ID_BLOCK = 1000;
const FILE_BYTES = 8;

export class ProducerIdAllocator {
  readonly #dir: string;
  #next: number;
  #blockEnd: number;
  /** The reservation of the next block under way: callers meanwhile wait for it. */
  #reserving: Promise<void> | null = null;

  private constructor(dir: string, next: number) {
    this.#dir = dir;
    this.#next = next;
    this.#blockEnd = next;
  }

  static async open(dir: string): Promise<ProducerIdAllocator> {
    let next = 0;
    try {
      const bytes = await readFile(join(dir, PRODUCER_IDS_FILE));
      next = bytes.length === FILE_BYTES ? readU64Safe(bytes, 0) : -1;
      if (next < 0 || next > MAX_PRODUCER_ID) {
        throw new ConchError(
          ErrorCode.STORAGE_ERROR,
          `${join(dir, PRODUCER_IDS_FILE)} is damaged: it must hold the next producer id as 8 bytes`,
        );
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    return new ProducerIdAllocator(dir, next);
  }

  /** A producer id never handed out before by this data directory. */
  async next(): Promise<number> {
    while (this.#next >= this.#blockEnd) {
      this.#reserving ??= this.#reserve().finally(() => {
        this.#reserving = null;
      });
      await this.#reserving;
    }
    return this.#next++;
  }

  async #reserve(): Promise<void> {
    const end = this.#blockEnd + PRODUCER_ID_BLOCK;
    if (end > MAX_PRODUCER_ID) throw new ConchError(ErrorCode.STORAGE_ERROR, "producer ids are used up");
    const bytes = Buffer.alloc(FILE_BYTES);
    writeU64(bytes, 0, end);
    await writeFileAtomically(join(this.#dir, PRODUCER_IDS_FILE), this.#dir, bytes);
    this.#blockEnd = end;
  }
}

/**
 * Topic metadata on disk. Each topic is a directory `<dataDir>/topics/<name>/` holding `topic.json`
 * and one directory per partition. Every change is made so that a crash leaves either the old state
 * or the new one, plus at most some leftovers that `scan` removes:
 *
 * - create: `topic.json` is written inside a staging directory which is then renamed to the topic's
 *   name, so a topic directory never exists without its metadata;
 * - metadata updates: write `topic.json.tmp`, fsync, rename over `topic.json`, fsync the directory;
 * - delete: rename the topic directory to a trash name first, then remove the trash.
 *
 * Staging and trash names start with "~", which no topic name may contain, so they can never be
 * mistaken for (or collide with) a topic; they carry no topic name because a 249-character name plus
 * a prefix would pass the file system's 255-byte limit.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { topicNameProblem } from "../format/topic-name.js";
import { childPath } from "../storage/child-path.js";
import { parseTopicConfigs, type TopicOverrides } from "./topic-config.js";

export const MAX_PARTITIONS = 10_000;
export const META_FILE = "topic.json";
const META_VERSION = 1;
const STAGING_PREFIX = "~creating-";
const TRASH_PREFIX = "~deleted-";
const PARTITION_DIR = /^(0|[1-9][0-9]*)$/;

export interface TopicMeta {
  name: string;
  partitions: number;
  /** Config overrides, canonical (see topic-config.ts). */
  configs: TopicOverrides;
}

/** A topic as `scan` found it: its metadata, and which of its partitions have a directory. */
export interface ScannedTopic extends TopicMeta {
  /**
   * A partition without one was never opened (its first open makes it, durably, before anything
   * is appended): it is empty.
   */
  partitionDirs: ReadonlySet<number>;
}

export class TopicStore {
  readonly root: string;
  #logger: Logger;

  constructor(dataDir: string, logger: Logger) {
    this.root = join(dataDir, "topics");
    this.#logger = logger;
  }

  topicDir(name: string): string {
    return join(this.root, name);
  }

  partitionDir(name: string, partition: number): string {
    // Per partition opened: the name is a legal topic name, which needs no normalising.
    return childPath(childPath(this.root, name), String(partition));
  }

  /**
   * Creates the topics directory if needed, removes what interrupted creates and deletes left
   * behind, and returns the metadata of every topic. Unreadable metadata fails the open: serving
   * without a topic whose data is still on disk would be worse than not starting.
   */
  async scan(): Promise<ScannedTopic[]> {
    await mkdir(this.root, { recursive: true });
    const topics: ScannedTopic[] = [];
    for (const entry of await readdir(this.root, { withFileTypes: true })) {
      const path = join(this.root, entry.name);
      if (entry.name.startsWith(STAGING_PREFIX) || entry.name.startsWith(TRASH_PREFIX)) {
        this.#logger.info({ path }, "removing leftover of an interrupted topic create or delete");
        await rm(path, { recursive: true, force: true });
        continue;
      }
      if (!entry.isDirectory() || topicNameProblem(entry.name) !== null) {
        this.#logger.warn({ path }, "ignoring an entry of the topics directory that is not a topic");
        continue;
      }
      if (!(await exists(join(path, META_FILE)))) {
        // Creates make a topic directory appear with its metadata, so this one is not ours.
        this.#logger.warn({ path }, "ignoring a directory without topic metadata");
        continue;
      }
      const meta = await this.#readMeta(entry.name);
      topics.push({ ...meta, partitionDirs: await this.#removeStrays(meta) });
    }
    return topics;
  }

  /** Makes the topic's directory and metadata appear at once. */
  async create(meta: TopicMeta): Promise<void> {
    const final = this.topicDir(meta.name);
    if (await exists(final)) {
      throw new ConchError(
        ErrorCode.TOPIC_ALREADY_EXISTS,
        `topic "${meta.name}" already exists (directory ${final} is present)`,
      );
    }
    const staging = join(this.root, `${STAGING_PREFIX}${randomBytes(8).toString("hex")}`);
    await mkdir(staging);
    try {
      await writeFileDurably(join(staging, META_FILE), serialize(meta));
      await rename(staging, final);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw storageError(`cannot create topic "${meta.name}"`, err);
    }
    await syncDir(this.root);
  }

  /** Replaces the topic's metadata atomically (config changes, added partitions). */
  async update(meta: TopicMeta): Promise<void> {
    const path = join(this.topicDir(meta.name), META_FILE);
    try {
      await writeFileDurably(`${path}.tmp`, serialize(meta));
      await rename(`${path}.tmp`, path);
      await syncDir(this.topicDir(meta.name));
    } catch (err) {
      throw storageError(`cannot update the metadata of topic "${meta.name}"`, err);
    }
  }

  /** Moves the topic out of sight in one rename, then removes it. Its logs must be closed. */
  async remove(name: string): Promise<void> {
    const trash = join(this.root, `${TRASH_PREFIX}${Date.now()}-${randomBytes(4).toString("hex")}`);
    try {
      await rename(this.topicDir(name), trash);
      await syncDir(this.root);
    } catch (err) {
      throw storageError(`cannot delete topic "${name}"`, err);
    }
    // Once renamed the topic is gone; a failure here only leaves trash for the next open.
    await rm(trash, { recursive: true, force: true }).catch((err: unknown) => {
      this.#logger.warn({ err, path: trash }, "could not remove a deleted topic's files");
    });
  }

  async #readMeta(name: string): Promise<TopicMeta> {
    const path = join(this.topicDir(name), META_FILE);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(path, "utf8"));
    } catch (err) {
      throw storageError(`cannot read ${path}; repair or remove the topic directory`, err);
    }
    const problem = metaProblem(name, parsed);
    if (problem !== null) {
      throw new ConchError(
        ErrorCode.STORAGE_ERROR,
        `${path} is invalid: ${problem}; repair or remove the topic directory`,
      );
    }
    return parsed as TopicMeta;
  }

  /**
   * Removes a metadata temp file left by an update that never completed. Partition directories past
   * the count are only reported: partitions are added after the new count is durable, so such a
   * directory was not made by the broker, and data is never deleted on a guess. Returns the
   * partitions (within the count) that have a directory.
   */
  async #removeStrays(meta: TopicMeta): Promise<Set<number>> {
    const dir = this.topicDir(meta.name);
    const partitions = new Set<number>();
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.name === `${META_FILE}.tmp`) {
        this.#logger.info({ path }, "removing leftover of an interrupted topic update");
        await rm(path, { force: true });
      } else if (
        entry.isDirectory() &&
        PARTITION_DIR.test(entry.name) &&
        Number(entry.name) >= meta.partitions
      ) {
        this.#logger.warn(
          { path, partitions: meta.partitions },
          "ignoring a partition directory past the count",
        );
      } else if (entry.isDirectory() && PARTITION_DIR.test(entry.name)) {
        partitions.add(Number(entry.name));
      }
    }
    return partitions;
  }
}

function serialize(meta: TopicMeta): string {
  const body = { version: META_VERSION, name: meta.name, partitions: meta.partitions, configs: meta.configs };
  return `${JSON.stringify(body, null, 2)}\n`;
}

function metaProblem(dirName: string, parsed: unknown): string | null {
  if (parsed === null || typeof parsed !== "object") return "not a JSON object";
  const m = parsed as Record<string, unknown>;
  if (m.version !== META_VERSION) return `unsupported version ${String(m.version)}`;
  if (m.name !== dirName) return `name ${JSON.stringify(m.name)} does not match the directory`;
  const p = m.partitions;
  if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > MAX_PARTITIONS) {
    return `partitions must be an integer from 1 to ${MAX_PARTITIONS}`;
  }
  if (m.configs === null || typeof m.configs !== "object" || Array.isArray(m.configs)) {
    return "configs must be an object";
  }
  try {
    parseTopicConfigs(m.configs as Record<string, string>);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return null;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

async function writeFileDurably(path: string, text: string): Promise<void> {
  const fh = await open(path, "w");
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Makes a rename or create in `dir` durable. Some platforms cannot open a directory; they need not. */
export async function syncDir(dir: string): Promise<void> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(dir, "r");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR" || code === "EPERM") return;
    throw err;
  }
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function storageError(what: string, err: unknown): ConchError {
  if (err instanceof ConchError) return err;
  const why = err instanceof Error ? err.message : String(err);
  return new ConchError(ErrorCode.STORAGE_ERROR, `${what}: ${why}`, { cause: err });
}

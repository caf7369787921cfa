/**
 * One broker per data directory. Two brokers appending to the same segment files would interleave
 * their writes and assign the same offsets twice; a second `conch broker` started by mistake must
 * refuse to open instead.
 *
 * The lock is a file, `<dataDir>/conch.lock`, created exclusively and holding the owner's pid.
 * Node has no flock(2), so a lock that outlives its process (a crash, SIGKILL) is recognised by
 * its pid: when no process has that pid any more, the lock is taken over. A lock whose pid is
 * alive is refused with the pid in the message, in case it is an unrelated process that reused
 * the pid: the operator then removes the file by hand.
 *
 * Taking over a stale lock means the last broker crashed. Whether the machine went down with it
 * decides how much recovery must distrust (a lost page cache can leave zeros before data that
 * survived): `<dataDir>/conch.boot` holds the kernel's boot id, written once a broker has opened
 * every log it recovered (`opened`), and removed by the next one as it takes the lock. A stale lock
 * with the current boot id there is a crash of the process alone (`crashedThisBoot`).
 */
import { mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConchError, ErrorCode } from "../format/errors.js";

export const LOCK_FILE = "conch.lock";
/** A lock file is a pid and a newline; anything longer is not ours. */
const MAX_LOCK_BYTES = 64;
export const BOOT_FILE = "conch.boot";
const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

export class DataDirLock {
  readonly path: string;
  /** The lock was stale and the same boot wrote the boot file: the page cache outlived the crash. */
  readonly crashedThisBoot: boolean;
  readonly #bootPath: string;
  #released = false;

  private constructor(path: string, bootPath: string, crashedThisBoot: boolean) {
    this.path = path;
    this.#bootPath = bootPath;
    this.crashedThisBoot = crashedThisBoot;
  }

  /**
   * Every log the open recovered is open: records the boot id, so that a crash from here on in
   * the same boot is known for one (no fsync: a machine crash that loses it is the cautious case).
   */
  async opened(): Promise<void> {
    const boot = await readBootId();
    if (boot !== null) await writeFile(this.#bootPath, `${boot}\n`).catch(() => {});
  }

  /** Takes the lock of `dataDir` (created if missing) or fails with STORAGE_ERROR. */
  static async acquire(dataDir: string): Promise<DataDirLock> {
    await mkdir(dataDir, { recursive: true });
    const path = join(dataDir, LOCK_FILE);
    const bootPath = join(dataDir, BOOT_FILE);
    let stale = false;
    // Two rounds: the second after removing a stale lock. Whoever creates the file first wins.
    for (let round = 0; round < 2; round++) {
      try {
        const file = await open(path, "wx");
        try {
          await file.writeFile(`${process.pid}\n`);
          await file.sync();
        } finally {
          await file.close();
        }
        const boot = await readBootId();
        const sameBoot = stale && boot !== null && (await readSmall(bootPath)) === boot;
        // Until this broker has opened what it recovers, a crash must not count as one of the process alone.
        await rm(bootPath, { force: true });
        return new DataDirLock(path, bootPath, sameBoot);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new ConchError(
            ErrorCode.STORAGE_ERROR,
            `cannot create the lock file ${path}: ${String(err)}`,
            {
              cause: err,
            },
          );
        }
      }
      const owner = await readOwner(path);
      if (owner !== null && isAlive(owner)) {
        throw new ConchError(
          ErrorCode.STORAGE_ERROR,
          `the data directory ${dataDir} is in use by process ${owner} (${path}); stop that broker, or remove the file if no broker runs there`,
        );
      }
      // The owner is gone (or the file is not a lock we can read): the lock is stale.
      await rm(path, { force: true });
      stale = true;
    }
    throw new ConchError(
      ErrorCode.STORAGE_ERROR,
      `the data directory ${dataDir} was locked meanwhile (${path})`,
    );
  }

  /** Removes the lock file; once. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await rm(this.path, { force: true });
  }
}

/** A small file's text, trimmed; null when it is missing, unreadable or longer than MAX_LOCK_BYTES. */
async function readSmall(path: string): Promise<string | null> {
  try {
    const bytes = await readFile(path);
    return bytes.length > MAX_LOCK_BYTES ? null : bytes.toString("utf8").trim();
  } catch {
    return null;
  }
}

/** The kernel's id of this boot, or null where there is none (not Linux). */
async function readBootId(): Promise<string | null> {
  const id = await readSmall(BOOT_ID_PATH);
  return id === null || id === "" ? null : id;
}

/** The pid in a lock file, or null when there is none or it is not a lock file. */
async function readOwner(path: string): Promise<number | null> {
  const text = await readSmall(path);
  if (text === null) return null;
  const pid = Number(text);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

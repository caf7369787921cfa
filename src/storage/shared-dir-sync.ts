/**
 * fsyncs of one directory asked for at about the same time, shared: the partitions of a topic
 * opening for the first time (a new topic's first produce reaches thousands) each make their
 * directory and need its entry in the topic directory durable. A caller is answered by an fsync
 * that started after it asked: the one running when it asks may have started before its change,
 * so it waits for the next, which then serves everyone who asked meanwhile.
 */
import { syncDir } from "./file-ops.js";

interface DirSyncs {
  running: Promise<void> | null;
  next: Promise<void> | null;
}

/** A shared `sync(dir)`: calls while one runs for the same directory share the next. */
export function sharedDirSync(sync: (dir: string) => Promise<void>): (dir: string) => Promise<void> {
  const byDir = new Map<string, DirSyncs>();
  const start = (dir: string, syncs: DirSyncs): Promise<void> => {
    const run = sync(dir).finally(() => {
      syncs.running = null;
      if (syncs.next === null) byDir.delete(dir);
    });
    syncs.running = run;
    return run;
  };
  return (dir) => {
    let syncs = byDir.get(dir);
    if (syncs === undefined) {
      syncs = { running: null, next: null };
      byDir.set(dir, syncs);
    }
    const running = syncs.running;
    if (running === null) return start(dir, syncs);
    if (syncs.next !== null) return syncs.next;
    const waiting = syncs;
    const next = running
      .catch(() => {})
      .then(() => {
        waiting.next = null;
        return start(dir, waiting);
      });
    waiting.next = next;
    return next;
  };
}

/** Makes every create, rename or unlink in `dir` done before the call durable, sharing fsyncs. */
export const syncDirShared = sharedDirSync(syncDir);

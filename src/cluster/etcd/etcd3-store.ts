/**
 * The MetaStore over the npm `etcd3` client. The client (and gRPC under it) is loaded by dynamic
 * import() when a broker starts in cluster mode, so single-node brokers never load it. Reads,
 * writes and transactions go through the client's raw KV calls, which return the revisions the
 * cache needs; the lease keeps itself alive with a loop of ours (etcd3-lease.ts) whose answers
 * give the self-fencing deadline (docs/cluster.md).
 */
import type { Etcd3, IKeyValue, IOptions, IRequestOp } from "etcd3";
import { ConchError, ErrorCode } from "../../format/errors.js";
import { Etcd3Lease } from "./etcd3-lease.js";
import type {
  MetaCompare,
  MetaEntry,
  MetaEvent,
  MetaOp,
  MetaSession,
  MetaSnapshot,
  MetaStore,
  MetaTxnResult,
  MetaWatch,
  SessionListener,
  WatchListener,
} from "./meta-store.js";

/** Endpoints as `host:port` (the client speaks plain HTTP/2 to them). */
export async function openEtcdStore(endpoints: readonly string[], dialTimeoutMs = 5000): Promise<MetaStore> {
  let mod: typeof import("etcd3");
  try {
    mod = await import("etcd3");
  } catch (err) {
    throw new ConchError(
      ErrorCode.INVALID_CONFIG,
      `cluster mode needs the optional package etcd3, which could not be loaded (${(err as Error).message}): npm install etcd3`,
    );
  }
  const hosts = endpoints.map((e) => `http://${e}`);
  const client = new mod.Etcd3({ hosts, dialTimeout: dialTimeoutMs });
  // The questions about a lease (LeaseTimeToLive) go over connections of their own, without the
  // client's retries and per-member circuit breaker: a question unanswered by its deadline (etcd
  // electing a leader) would otherwise be retried past that deadline and count three failures
  // against the member, whose breaker then refuses every call for 5 s, keepalives included, long
  // enough for the lease that etcd's new leader extended to run out. The broker asks again itself.
  const questions = new mod.Etcd3({
    hosts,
    dialTimeout: dialTimeoutMs,
    faultHandling: { host: () => RUN_ONCE, global: RUN_ONCE },
  });
  return new Etcd3Store(client, questions);
}

type FaultPolicy = NonNullable<NonNullable<IOptions["faultHandling"]>["global"]>;

/** A fault-handling policy that runs the call once and keeps no count. */
const RUN_ONCE: FaultPolicy = {
  _altReturn: undefined as never,
  onSuccess: () => ({ dispose: () => {} }),
  onFailure: () => ({ dispose: () => {} }),
  execute: async (fn, signal) => fn({ signal: signal ?? new AbortController().signal }),
};

function rangeEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  // The smallest key past every key that starts with the prefix (prefixes here end in "/").
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  return end;
}

function toEntry(kv: IKeyValue): MetaEntry {
  return {
    key: kv.key.toString(),
    value: kv.value.toString(),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

class Etcd3Store implements MetaStore {
  readonly #client: Etcd3;
  /** Open watches: the client retries a broken one forever, which would hold the process open. */
  readonly #watches = new Set<MetaWatch>();

  /** For LeaseTimeToLive only (openEtcdStore says why). */
  readonly #questions: Etcd3;

  constructor(client: Etcd3, questions: Etcd3) {
    this.#client = client;
    this.#questions = questions;
  }

  async openSession(ttlSeconds: number, listener: SessionListener): Promise<MetaSession> {
    const sentAt = performance.now();
    const { ID } = await this.#client.leaseClient.leaseGrant({ TTL: ttlSeconds });
    return new Etcd3Lease(this.#client, this.#questions, ID, ttlSeconds, sentAt, listener);
  }

  async getPrefix(prefix: string): Promise<MetaSnapshot> {
    const res = await this.#client.kv.range({ key: Buffer.from(prefix), range_end: rangeEnd(prefix) });
    return { revision: Number(res.header.revision), entries: res.kvs.map(toEntry) };
  }

  async get(key: string): Promise<MetaEntry | undefined> {
    const res = await this.#client.kv.range({ key: Buffer.from(key) });
    const kv = res.kvs[0];
    return kv === undefined ? undefined : toEntry(kv);
  }

  async watchPrefix(prefix: string, fromRevision: number, listener: WatchListener): Promise<MetaWatch> {
    const watcher = await this.#client.watch().prefix(prefix).startRevision(String(fromRevision)).create();
    watcher.on("data", (res) => {
      if (res.events.length === 0) return;
      const events: MetaEvent[] = res.events.map((e) =>
        e.type === "Put"
          ? { type: "put", entry: toEntry(e.kv) }
          : { type: "delete", key: e.kv.key.toString(), modRevision: Number(e.kv.mod_revision) },
      );
      listener.events(events);
    });
    // The client reconnects a broken watch by itself from the last revision it saw; an error
    // here is one it gave up on (a compacted revision, a cancelled watch).
    watcher.on("error", (err) => listener.failed(err));
    const watch: MetaWatch = {
      cancel: () => {
        this.#watches.delete(watch);
        return watcher.cancel();
      },
    };
    this.#watches.add(watch);
    return watch;
  }

  async txn(compares: readonly MetaCompare[], ops: readonly MetaOp[]): Promise<MetaTxnResult> {
    const res = await this.#client.kv.txn({
      compare: compares.map((c) =>
        c.target === "create"
          ? { key: Buffer.from(c.key), target: "Create", result: "Equal", create_revision: c.revision }
          : { key: Buffer.from(c.key), target: "Mod", result: "Equal", mod_revision: c.revision },
      ),
      success: ops.map(toRequestOp),
      failure: [],
    });
    return { succeeded: res.succeeded, revision: Number(res.header.revision) };
  }

  close(): void {
    for (const w of this.#watches) void w.cancel().catch(() => {});
    this.#client.close();
    this.#questions.close();
  }
}

function toRequestOp(op: MetaOp): IRequestOp {
  if (op.type === "put") {
    const lease = op.leased?.leaseId;
    return {
      request_put: {
        key: Buffer.from(op.key),
        value: Buffer.from(op.value),
        ...(lease === undefined ? {} : { lease }),
      },
    };
  }
  return {
    request_delete_range: {
      key: Buffer.from(op.key),
      ...(op.prefix === true ? { range_end: rangeEnd(op.key) } : {}),
    },
  };
}

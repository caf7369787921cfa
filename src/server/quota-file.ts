/**
 * The quotas of `<dataDir>/security/quotas.json` (docs/security.md "Quotas"), applied to a
 * QuotaManager at start and again on SIGHUP, so quotas change live:
 *
 *   { "version": 1,
 *     "principals": { "User:alice": { "produceBytesPerSec": 1048576 }, "*": { "requestsPerSec": 1000 } },
 *     "clientIds":  { "batch-loader": { "fetchBytesPerSec": 10485760 } } }
 *
 * `*` is the default for every principal (or client id) without its own entry. A file that does not
 * pass its checks is an error naming the entry: at start the broker does not start; on reload the
 * quotas in force stay.
 */

import type { QuotaLimits, QuotaManager } from "../security/quota-manager.js";
import { StoreFile } from "../security/store-file.js";

export const QUOTAS_FILE = "quotas.json";
const KINDS = ["produceBytesPerSec", "fetchBytesPerSec", "requestsPerSec"] as const;

type Entries = Map<string | null, QuotaLimits>;

/** Reads the file of `dataDir` (none: no quotas) into entries per principal and per client id. */
export async function readQuotas(dataDir: string): Promise<{ principals: Entries; clientIds: Entries }> {
  const { file, document } = await StoreFile.open(dataDir, QUOTAS_FILE);
  const out = { principals: new Map() as Entries, clientIds: new Map() as Entries };
  if (document === null) return out;
  if (typeof document !== "object" || Array.isArray(document)) throw file.invalid("not a JSON object");
  const doc = document as Record<string, unknown>;
  if (doc.version !== 1) throw file.invalid(`version ${JSON.stringify(doc.version)}, expected 1`);
  for (const table of ["principals", "clientIds"] as const) {
    const entries = doc[table] ?? {};
    if (typeof entries !== "object" || entries === null || Array.isArray(entries)) {
      throw file.invalid(`${table} is not an object`);
    }
    for (const [name, limits] of Object.entries(entries)) {
      if (typeof limits !== "object" || limits === null || Array.isArray(limits)) {
        throw file.invalid(`${table}.${name} is not an object`);
      }
      const checked: Record<string, number> = {};
      for (const [kind, value] of Object.entries(limits)) {
        if (!(KINDS as readonly string[]).includes(kind))
          throw file.invalid(`${table}.${name}: unknown quota ${kind}`);
        if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
          throw file.invalid(`${table}.${name}.${kind} must be a positive integer`);
        }
        checked[kind] = value;
      }
      out[table].set(name === "*" ? null : name, checked);
    }
  }
  return out;
}

/** Writes the quotas `quotas` holds to the file (atomically: the old file or the new one). */
export async function writeQuotaFile(dataDir: string, quotas: QuotaManager): Promise<void> {
  const { file } = await StoreFile.open(dataDir, QUOTAS_FILE);
  const q = quotas.quotas();
  const principals: Record<string, QuotaLimits> = { ...q.principals };
  if (q.principalDefault !== null) principals["*"] = q.principalDefault;
  const clientIds: Record<string, QuotaLimits> = { ...q.clientIds };
  if (q.clientIdDefault !== null) clientIds["*"] = q.clientIdDefault;
  await file.update(() => ({
    document: { version: 1, principals, clientIds },
    result: undefined,
    apply: () => {},
  }));
}

/** Makes `quotas` hold exactly the file's entries; returns how many there are. */
export async function applyQuotaFile(dataDir: string, quotas: QuotaManager): Promise<number> {
  const { principals, clientIds } = await readQuotas(dataDir);
  const now = quotas.quotas();
  for (const name of Object.keys(now.principals))
    if (!principals.has(name)) quotas.setPrincipalQuota(name, null);
  if (now.principalDefault !== null && !principals.has(null)) quotas.setPrincipalQuota(null, null);
  for (const name of Object.keys(now.clientIds))
    if (!clientIds.has(name)) quotas.setClientIdQuota(name, null);
  if (now.clientIdDefault !== null && !clientIds.has(null)) quotas.setClientIdQuota(null, null);
  for (const [name, limits] of principals) quotas.setPrincipalQuota(name, limits);
  for (const [name, limits] of clientIds) quotas.setClientIdQuota(name, limits);
  return principals.size + clientIds.size;
}

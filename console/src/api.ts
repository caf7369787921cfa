/** Calls to the admin API (docs/http-api.md); a failure is an ApiError with the broker's code. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "content-type": "application/json", accept: "application/json" };
  }
  const res = await fetch(path, init);
  const json = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) {
    const e = json?.error;
    throw new ApiError(res.status, e?.code ?? "INTERNAL", e?.message ?? `${res.status} ${res.statusText}`);
  }
  return json as T;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** The shapes the console reads (a subset of each answer). */
export interface TopicSummary {
  name: string;
  internal: boolean;
  partitions: number;
  /** null while a partition's figures are not known (a silent leader; a single node recovering after a crash). */
  sizeBytes: number | null;
  messages: number | null;
  retentionMs: number;
  retentionBytes: number;
  cleanupPolicy: string;
}

/**
 * The figures are null when not known: in cluster mode the partition's leader did not answer in
 * time; on a single node the partition is still being recovered after a crash.
 */
export interface PartitionRow {
  partition: number;
  logStartOffset: number | null;
  logEndOffset: number | null;
  highWatermark: number | null;
  sizeBytes: number | null;
  segments: number | null;
  quarantined: unknown[] | null;
  /** Cluster mode only. */
  leader?: number;
  replicas?: number[];
  isr?: number[];
}

export interface TopicDetail {
  name: string;
  internal: boolean;
  configs: Record<string, string>;
  partitions: PartitionRow[];
}

export interface GroupSummary {
  group: string;
  state: string;
  members: number;
}

export interface GroupDetail {
  group: string;
  state: string;
  generation: number;
  members: { memberId: string; clientId?: string }[];
  partitions: {
    topic: string;
    partition: number;
    owner: string;
    committed: number;
    highWatermark: number;
    lag: number;
  }[];
}

export interface ShownBytes {
  encoding: "utf8" | "base64";
  data: string;
  size: number;
  truncated: boolean;
}

export interface BrowseAnswer {
  messages: { offset: number; timestampMs: number; key: ShownBytes | null; value: ShownBytes | null }[];
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
  scan?: { key: string; examined: number; limit: number; complete: boolean };
}

/**
 * /api/v1/users, /api/v1/acls and /api/v1/quotas (docs/http-api.md): the running broker's users,
 * ACL rules and quotas, changed live and durably (each change rewrites its file in
 * `<data-dir>/security/` before it applies). Passwords are taken, never shown; credentials never
 * leave the broker. Reading them takes describe on the cluster, changing them alter (router.ts).
 */

import { ConchError, ErrorCode } from "../format/errors.js";
import type { AclFilter, AclRule } from "../security/acl-rule.js";
import type { QuotaLimits } from "../security/quota-manager.js";
import type { UserInfo } from "../security/user-store.js";
import type { HttpContext } from "./http-context.js";
import { badRequest } from "./http-errors.js";
import { readJsonObject, stringField } from "./request-input.js";
import type { Route } from "./router.js";

/** What the broker's security offers the admin API (BrokerSecurity). */
export interface SecurityAdmin {
  listUsers(): UserInfo[];
  addUser(name: string, password: string): Promise<void>;
  setPassword(name: string, password: string): Promise<void>;
  deleteUser(name: string): Promise<void>;
  listAcls(filter: AclFilter): AclRule[];
  addAcls(rules: readonly AclRule[]): Promise<number>;
  removeAcls(filter: AclFilter): Promise<AclRule[]>;
  listQuotas(): unknown;
  /** `name` null: the default of the table. `limits` null removes the entry. */
  setQuota(table: "principals" | "clientIds", name: string | null, limits: QuotaLimits | null): Promise<void>;
}

const FILTER_FIELDS = [
  "principal",
  "permission",
  "operation",
  "resourceType",
  "patternType",
  "name",
] as const;
const QUOTA_KINDS = ["produceBytesPerSec", "fetchBytesPerSec", "requestsPerSec"] as const;
const TABLES = { principals: "principals", "client-ids": "clientIds" } as const;

function filterOf(query: URLSearchParams): AclFilter {
  const filter: Record<string, string> = {};
  for (const field of FILTER_FIELDS) {
    const value = query.get(field);
    if (value !== null) filter[field] = value;
  }
  return filter as AclFilter;
}

function limitsOf(body: Record<string, unknown>): QuotaLimits {
  const limits: Record<string, number> = {};
  for (const [kind, value] of Object.entries(body)) {
    if (!(QUOTA_KINDS as readonly string[]).includes(kind)) throw badRequest(`unknown quota "${kind}"`);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw badRequest(`${kind} must be a positive integer`);
    }
    limits[kind] = value;
  }
  return limits;
}

function tableOf(name: string | undefined): "principals" | "clientIds" {
  const table = name === undefined ? undefined : TABLES[name as keyof typeof TABLES];
  if (table === undefined) throw badRequest("quotas are set under principals or client-ids");
  return table;
}

export function securityRoutes(context: HttpContext): Route[] {
  const s = (): SecurityAdmin => {
    if (context.security === null)
      throw new ConchError(ErrorCode.SHUTTING_DOWN, "the broker's security is not open");
    return context.security;
  };
  return [
    {
      method: "GET",
      path: "/api/v1/users",
      access: { operation: "describe", cluster: true },
      handler: () => ({ status: 200, body: { users: s().listUsers() } }),
    },
    {
      method: "POST",
      path: "/api/v1/users",
      access: { operation: "alter", cluster: true },
      handler: async ({ req }) => {
        const body = await readJsonObject(req);
        const name = stringField(body, "name");
        await s().addUser(name, stringField(body, "password"));
        return { status: 201, body: { name } };
      },
    },
    {
      method: "PUT",
      path: "/api/v1/users/:user/password",
      access: { operation: "alter", cluster: true },
      handler: async ({ req, params }) => {
        const body = await readJsonObject(req);
        await s().setPassword(params.user ?? "", stringField(body, "password"));
        return { status: 200, body: { name: params.user } };
      },
    },
    {
      method: "DELETE",
      path: "/api/v1/users/:user",
      access: { operation: "alter", cluster: true },
      handler: async ({ params }) => {
        await s().deleteUser(params.user ?? "");
        return { status: 200, body: { name: params.user } };
      },
    },
    {
      method: "GET",
      path: "/api/v1/acls",
      access: { operation: "describe", cluster: true },
      handler: ({ query }) => ({ status: 200, body: { rules: s().listAcls(filterOf(query)) } }),
    },
    {
      method: "POST",
      path: "/api/v1/acls",
      access: { operation: "alter", cluster: true },
      handler: async ({ req }) => {
        const body = await readJsonObject(req);
        if (!Array.isArray(body.rules)) throw badRequest('"rules" must be an array of ACL rules');
        const added = await s().addAcls(body.rules as AclRule[]);
        return { status: 201, body: { added } };
      },
    },
    {
      method: "DELETE",
      path: "/api/v1/acls",
      access: { operation: "alter", cluster: true },
      handler: async ({ query }) => {
        const filter = filterOf(query);
        if (Object.keys(filter).length === 0) throw badRequest("give at least one field to match rules by");
        return { status: 200, body: { removed: await s().removeAcls(filter) } };
      },
    },
    {
      method: "GET",
      path: "/api/v1/quotas",
      access: { operation: "describe", cluster: true },
      handler: () => ({ status: 200, body: s().listQuotas() }),
    },
    {
      method: "PUT",
      path: "/api/v1/quotas/:table/:name",
      access: { operation: "alter", cluster: true },
      handler: async ({ req, params }) => {
        const limits = limitsOf(await readJsonObject(req));
        const name = params.name === "*" ? null : (params.name ?? null);
        await s().setQuota(tableOf(params.table), name, limits);
        return { status: 200, body: { [params.name ?? ""]: limits } };
      },
    },
    {
      method: "DELETE",
      path: "/api/v1/quotas/:table/:name",
      access: { operation: "alter", cluster: true },
      handler: async ({ params }) => {
        const name = params.name === "*" ? null : (params.name ?? null);
        await s().setQuota(tableOf(params.table), name, null);
        return { status: 200, body: {} };
      },
    },
  ];
}

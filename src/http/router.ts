/**
 * The route table: a method and a path pattern ("/api/v1/topics/:topic") per handler. Matching
 * splits the path once and compares segments; a path that matches a pattern under another method
 * is told apart from one that matches nothing (405 rather than 404).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { Operation, ResourceType } from "../security/acl-rule.js";

/** Who sent a request, and what they may do (http-access.ts). */
export interface Access {
  /** `User:<name>` after a Basic login, else User:ANONYMOUS. */
  readonly principal: string;
  allowed(operation: Operation, type: ResourceType, name: string): boolean;
  /** Throws the resource type's AUTHORIZATION_FAILED (403) unless allowed. */
  check(operation: Operation, type: ResourceType, name: string): void;
}

/**
 * What a route needs (docs/http-api.md, security), declared beside it so no route is forgotten:
 * - "open": nothing, not even a login (health checks);
 * - "metrics": a login unless the broker serves /metrics open (--http-metrics);
 * - "login": a login, and the handler checks ACLs itself (lists filtered per item, a name in the body);
 * - an ACL: a login and `operation` on the cluster, or on the resource named by the path parameter.
 */
export type RouteAccess =
  | "open"
  | "metrics"
  | "login"
  | { readonly operation: Operation; readonly cluster: true }
  | { readonly operation: Operation; readonly type: "topic" | "group"; readonly param: string };

export interface ApiRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Path parameters, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly access: Access;
}

/** A JSON answer; null when the handler wrote the response itself (metrics text, an event stream). */
export type ApiResult = { status: number; body: unknown } | null;

export type RouteHandler = (request: ApiRequest) => Promise<ApiResult> | ApiResult;

export interface Route {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
  readonly access: RouteAccess;
  readonly handler: RouteHandler;
}

interface CompiledRoute extends Route {
  readonly segments: readonly string[];
}

export type RouteMatch =
  | { found: true; route: Route; params: Record<string, string> }
  | { found: false; methods: string[] };

export class Router {
  readonly #routes: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.#routes = routes.map((r) => ({ ...r, segments: r.path.split("/") }));
  }

  match(method: string, pathname: string): RouteMatch {
    const parts = pathname.split("/");
    const methods: string[] = [];
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, parts);
      if (params === null) continue;
      if (route.method === method || (method === "HEAD" && route.method === "GET")) {
        return { found: true, route, params };
      }
      methods.push(route.method);
    }
    return { found: false, methods };
  }
}

function matchSegments(pattern: readonly string[], parts: readonly string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const part = parts[i]!;
    if (p.startsWith(":")) {
      if (part === "") return null;
      params[p.slice(1)] = decode(part);
    } else if (p !== part) return null;
  }
  return params;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, `bad percent-encoding in the path: ${part}`);
  }
}

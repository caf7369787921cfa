/**
 * The route table: a method and a path pattern ("/api/v1/topics/:topic") per handler. Matching
 * splits the path once and compares segments; a path that matches a pattern under another method
 * is told apart from one that matches nothing (405 rather than 404).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConchError, ErrorCode } from "../format/errors.js";

export interface ApiRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Path parameters, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** A JSON answer; null when the handler wrote the response itself (metrics text, an event stream). */
export type ApiResult = { status: number; body: unknown } | null;

export type RouteHandler = (request: ApiRequest) => Promise<ApiResult> | ApiResult;

export interface Route {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
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

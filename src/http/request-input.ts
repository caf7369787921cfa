/**
 * Reading what a client sends: a JSON body read to a size limit (counted as it arrives, before it
 * is kept), sent as application/json, and query and path parameters checked into numbers and
 * strings. Everything that fails
 * is a ConchError, answered as a 4xx by the server.
 */
import type { IncomingMessage } from "node:http";
import { ConchError, ErrorCode } from "../format/errors.js";
import { badRequest } from "./http-errors.js";

/** The largest request body accepted: admin requests are a few fields. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Reads the body as a JSON object; an empty body is `{}`. */
export async function readJsonObject(
  req: IncomingMessage,
  limit = MAX_BODY_BYTES,
): Promise<Record<string, unknown>> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  if (size === 0) return {};
  // A page on any other site can make a browser send a POST with a text/plain or form body and no
  // preflight; a JSON content type cannot be sent cross-site without one, which this port never
  // grants. So a body counts only when it says it is JSON.
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw new ConchError(
      ErrorCode.MALFORMED_REQUEST,
      `the request body must be sent with content-type: application/json, got ${JSON.stringify(type || "none")}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, `the request body is not valid JSON: ${why}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConchError(ErrorCode.MALFORMED_REQUEST, "the request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

function tooLarge(limit: number): ConchError {
  return new ConchError(ErrorCode.FRAME_TOO_LARGE, `the request body is larger than ${limit} bytes`);
}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** An integer in [min, max] from a query or path text, or `fallback` when absent. */
export function integerParam(
  name: string,
  raw: string | null | undefined,
  min: number,
  max: number,
  fallback?: number,
): number {
  if (raw === null || raw === undefined || raw === "") {
    if (fallback !== undefined) return fallback;
    throw badRequest(`${name} is required`);
  }
  const n = INTEGER.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badRequest(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** An integer field of a JSON body in [min, max]. */
export function integerField(body: Record<string, unknown>, name: string, min: number, max: number): number {
  const v = body[name];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    throw badRequest(
      `"${name}" must be an integer from ${min} to ${max}, got ${JSON.stringify(v) ?? "nothing"}`,
    );
  }
  return v;
}

/** A list of broker ids (at most 1000), as a reassignment's replicas. */
export function brokerIdsField(body: Record<string, unknown>, name: string): number[] {
  const v = body[name];
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    v.length > 1000 ||
    !v.every((id) => typeof id === "number" && Number.isSafeInteger(id) && id >= 0 && id <= 2 ** 31 - 1)
  ) {
    throw badRequest(
      `"${name}" must be a list of broker ids, got ${JSON.stringify(v)?.slice(0, 100) ?? "nothing"}`,
    );
  }
  return v as number[];
}

export function stringField(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  if (typeof v !== "string" || v.length === 0) {
    throw badRequest(`"${name}" must be a non-empty string, got ${JSON.stringify(v) ?? "nothing"}`);
  }
  return v;
}

/** A `{ "key": "value" }` map of config strings; absent is `{}`. */
export function configsField(body: Record<string, unknown>, name: string): Record<string, string> {
  const v = body[name];
  if (v === undefined) return {};
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw badRequest(`"${name}" must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== "string") throw badRequest(`"${name}.${key}" must be a string`);
    out[key] = value;
  }
  return out;
}

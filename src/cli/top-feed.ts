/**
 * The client side of the broker's event feed (GET /api/v1/events, docs/http-api.md) for `conch top`:
 * a Server-Sent Events reader over node:http (Node 20 has no EventSource) that hands each
 * `snapshot` event to a callback. What the broker sends is bounded before it is kept: an event
 * larger than MAX_EVENT_BYTES ends the stream with an error instead of growing a buffer.
 */
import { get, type IncomingMessage } from "node:http";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { EventSnapshot } from "../http/event-feed.js";

/** A snapshot of thousands of topics is well under this. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** What the feed sends, as the broker's side defines it. */
export type Snapshot = EventSnapshot;

export interface FeedHandlers {
  snapshot(s: Snapshot): void;
  /** The stream ended or failed; nothing more comes. */
  closed(err: Error | null): void;
}

/** Opens the feed at `http://host:port`; returns a function that closes it. */
export function openEventFeed(host: string, port: number, handlers: FeedHandlers): () => void {
  let done = false;
  const finish = (err: Error | null): void => {
    if (done) return;
    done = true;
    req.destroy();
    handlers.closed(err);
  };
  const req = get({ host, port, path: "/api/v1/events", headers: { accept: "text/event-stream" } }, (res) => {
    if (res.statusCode !== 200) {
      readError(res).then(finish, finish);
      return;
    }
    res.setEncoding("utf8");
    let buffer = "";
    res.on("data", (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event !== null) {
          try {
            handlers.snapshot(event);
          } catch (err) {
            return finish(err instanceof Error ? err : new Error(String(err)));
          }
        }
        end = buffer.indexOf("\n\n");
      }
      if (buffer.length > MAX_EVENT_BYTES) {
        finish(new ConchError(ErrorCode.FRAME_TOO_LARGE, `an event larger than ${MAX_EVENT_BYTES} bytes`));
      }
    });
    res.on("end", () => finish(new Error("the broker closed the event feed")));
    res.on("error", (err) => finish(err));
  });
  req.on("error", (err) => finish(err));
  return () => {
    done = true;
    req.destroy();
  };
}

/** One event block: its `snapshot` data parsed, or null for another event or a comment. */
function parseEvent(block: string): Snapshot | null {
  let name = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trimStart();
  }
  if (name !== "snapshot" || data === "") return null;
  const value = JSON.parse(data) as Snapshot;
  if (!Array.isArray(value.topics) || !Array.isArray(value.groups)) {
    throw new Error("the event feed sent a snapshot without topics and groups");
  }
  return value;
}

async function readError(res: IncomingMessage): Promise<Error> {
  let text = "";
  for await (const chunk of res) {
    text += String(chunk);
    if (text.length > 64 * 1024) break;
  }
  try {
    const e = (JSON.parse(text) as { error: { code: string; message: string } }).error;
    return new Error(`${e.message} (${e.code})`);
  } catch {
    return new Error(`the event feed answered HTTP ${res.statusCode}`);
  }
}

/** GET `path` as JSON, its body bounded to `maxBytes`; an error answer becomes its message. */
export function getJson<T>(host: string, port: number, path: string, maxBytes = MAX_EVENT_BYTES): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = get({ host, port, path, headers: { accept: "application/json" } }, (res) => {
      if (res.statusCode !== 200) {
        readError(res).then(reject, reject);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          req.destroy();
          reject(new ConchError(ErrorCode.FRAME_TOO_LARGE, `${path} answered more than ${maxBytes} bytes`));
        } else chunks.push(chunk);
      });
      res.on("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T);
        } catch (err) {
          reject(err);
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}

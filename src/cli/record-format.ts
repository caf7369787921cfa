/**
 * How `conch consume` prints a record, written straight from the fetched bytes into the output
 * buffer. `value` copies the value bytes and a newline, nothing else. `json` needs text, so it
 * decodes key, value and headers as UTF-8 and lets JSON.stringify escape them; the fixed part of
 * each line is built once per fetched batch.
 */
import type { RecordCursor } from "../format/record-cursor.js";
import { HeaderCursor } from "../format/record-headers.js";
import type { OutputBuffer } from "./output-buffer.js";

export const FORMATS = ["value", "json"] as const;
export type FormatName = (typeof FORMATS)[number];

const NEWLINE = 0x0a;

export interface RecordWriter {
  /** Called once per fetched batch, before its records. */
  startBatch(topic: string, partition: number): void;
  write(c: RecordCursor, out: OutputBuffer): void;
}

export function recordWriter(format: FormatName): RecordWriter {
  return format === "json" ? new JsonWriter() : new ValueWriter();
}

class ValueWriter implements RecordWriter {
  startBatch(): void {}

  write(c: RecordCursor, out: OutputBuffer): void {
    out.bytes(c.buffer, c.valueStart, c.valueEnd);
    out.byte(NEWLINE);
  }
}

/**
 * `{"topic":..,"partition":..,"offset":..,"timestamp":..,"key":..|null,"value":..|null}` per line,
 * with `"headers":[{"key":..,"value":..|null},..]` after the value when the record has headers.
 */
class JsonWriter implements RecordWriter {
  #prefix = "";
  readonly #headers = new HeaderCursor();

  startBatch(topic: string, partition: number): void {
    this.#prefix = `{"topic":${JSON.stringify(topic)},"partition":${partition},"offset":`;
  }

  write(c: RecordCursor, out: OutputBuffer): void {
    const buf = c.buffer;
    const key = c.keyNull ? "null" : JSON.stringify(buf.toString("utf8", c.keyStart, c.keyEnd));
    const value = c.valueNull ? "null" : JSON.stringify(buf.toString("utf8", c.valueStart, c.valueEnd));
    const headers = c.hasHeaders ? this.#headersJson(c) : "";
    out.text(
      `${this.#prefix}${c.offset},"timestamp":${c.timestampMs},"key":${key},"value":${value}${headers}}\n`,
    );
  }

  #headersJson(c: RecordCursor): string {
    const h = c.headers(this.#headers);
    let json = ',"headers":[';
    for (let first = true; h.next(); first = false) {
      const v = h.value();
      json += `${first ? "" : ","}{"key":${JSON.stringify(h.key())},"value":${v === null ? "null" : JSON.stringify(v.toString("utf8"))}}`;
    }
    return `${json}]`;
  }
}

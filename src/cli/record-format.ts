/**
 * How `conch consume` prints a record, written straight from the fetched bytes into the output
 * buffer. `value` copies the value bytes and a newline, nothing else. `json` needs text, so it
 * decodes key and value as UTF-8 and lets JSON.stringify escape them; the fixed part of each line is
 * built once per fetched batch.
 */
import type { RecordCursor } from "../format/record-cursor.js";
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

/** `{"topic":..,"partition":..,"offset":..,"timestamp":..,"key":..|null,"value":..}` per line. */
class JsonWriter implements RecordWriter {
  #prefix = "";

  startBatch(topic: string, partition: number): void {
    this.#prefix = `{"topic":${JSON.stringify(topic)},"partition":${partition},"offset":`;
  }

  write(c: RecordCursor, out: OutputBuffer): void {
    const buf = c.buffer;
    const key = c.keyEnd === c.keyStart ? "null" : JSON.stringify(buf.toString("utf8", c.keyStart, c.keyEnd));
    const value = JSON.stringify(buf.toString("utf8", c.valueStart, c.valueEnd));
    out.text(`${this.#prefix}${c.offset},"timestamp":${c.timestampMs},"key":${key},"value":${value}}\n`);
  }
}

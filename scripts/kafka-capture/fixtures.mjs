#!/usr/bin/env node
// Writes test/kafka/fixtures/<api>.ts from capture files (capture.mjs): per API, the first request
// of each version from each client, annotated field by field, and (from CAPTURE_RANGES=mock runs)
// the mock's response to it, with the values the golden tests expect. Usage, after `npm run build`:
//   node scripts/kafka-capture/fixtures.mjs CLIENT=capture.json ...   (CLIENT: librdkafka, kcat, ...)
import { readFileSync, writeFileSync } from "node:fs";
import * as k from "../../dist/src/kafka/protocol/index.js";
import { readResponse } from "./response-readers.mjs";

const CLIENTS = {
  librdkafka: "confluent-kafka 1.7.0 (librdkafka 2.0.2)",
  kcat: "kcat 1.7.1 (librdkafka 2.0.2)",
  "kafka-python": "kafka-python 2.0.2",
  kafkajs: "kafkajs 2.2.4",
};
const LIBRARY = { kcat: "librdkafka" };

// Field-by-field annotation: every outermost primitive read is recorded with its bytes and value.
let trace = null;
let depth = 0;
for (const name of Object.getOwnPropertyNames(k.KafkaReader.prototype)) {
  const d = Object.getOwnPropertyDescriptor(k.KafkaReader.prototype, name);
  if (typeof d.value !== "function" || ["constructor", "reset", "done", "malformed"].includes(name)) continue;
  const original = d.value;
  k.KafkaReader.prototype[name] = function (...args) {
    const start = this.position;
    depth++;
    try {
      const value = original.apply(this, args);
      if (depth === 1 && trace) trace.push({ start, end: this.position, name, value });
      return value;
    } finally {
      depth--;
    }
  };
}

function describe(f) {
  const v = f.value;
  if (Buffer.isBuffer(v)) return `${f.name}: ${v.length} bytes`;
  if (typeof v === "string") return `${f.name} ${JSON.stringify(v)}`;
  if (v === undefined) return f.name;
  return `${f.name} ${v}`;
}

function annotate(frame, fields, labels) {
  const lines = [];
  let at = 0;
  const put = (start, end, comment) => {
    for (let p = start; p < end; p += 32) {
      const hex = frame.subarray(p, Math.min(end, p + 32)).toString("hex");
      lines.push(p === start ? `${hex.padEnd(40)} ; ${comment}` : hex);
    }
  };
  fields.forEach((f, i) => {
    if (f.start > at) put(at, f.start, "?");
    put(f.start, f.end, labels[i] ? `${labels[i]} ${describe(f).replace(/^\S+ ?/, "")}`.trim() : describe(f));
    at = f.end;
  });
  if (at < frame.length) put(at, frame.length, "?");
  return lines.join("\n");
}

const plain = (v) =>
  JSON.parse(
    JSON.stringify(v, (_k, x) =>
      x && x.type === "Buffer" && Array.isArray(x.data) ? { hex: Buffer.from(x.data).toString("hex") } : x,
    ),
  );

const kebab = (s) => s.replace(/[a-z][A-Z]/g, (m) => `${m[0]}-${m[1]}`).toLowerCase();
const byApi = new Map();
const seen = new Set();
for (const arg of process.argv.slice(2)) {
  const [client, file] = arg.split("=");
  const lib = LIBRARY[client] ?? client;
  const { frames } = JSON.parse(readFileSync(file, "utf8"));
  for (const f of frames) {
    if (f.dir !== "request") continue;
    const key = `${lib}|${f.apiKey}|${f.apiVersion}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const api = k.supportedApi(f.apiKey);
    const frame = Buffer.from(f.hex, "hex");
    trace = [];
    const decoded = k.decodeKafkaRequest(frame);
    const fields = trace;
    trace = null;
    const name = `${kebab(api.name)}-v${f.apiVersion}-${client}`;
    const entry = { name, client, api, version: f.apiVersion, blocks: [], values: {} };
    entry.blocks.push(
      `# ${name}-request: ${api.name} v${f.apiVersion} from ${CLIENTS[client]}, correlationId ${f.correlationId}\n` +
        annotate(frame, fields, ["size", "apiKey", "apiVersion", "correlationId", "clientId"]),
    );
    entry.values[`${name}-request`] = plain(decoded.request);
    const answers = frames.filter(
      (x) => x.dir === "response" && x.conn === f.conn && x.correlationId === f.correlationId && !x.downgraded,
    );
    const res = answers.find((x) => !x.standIn) ?? answers[0];
    if (res) {
      const rframe = Buffer.from(res.hex, "hex");
      trace = [];
      let value;
      try {
        value = readResponse(rframe, f.apiKey, f.apiVersion);
      } catch (e) {
        console.error(`${name}: the mock's response is left out: ${e.message}`);
      }
      const rfields = trace;
      trace = null;
      if (value !== undefined) {
        const head = `${rframe.subarray(0, 8).toString("hex").padEnd(40)} ; size ${rframe.length - 4}, correlationId ${f.correlationId}\n`;
        entry.blocks.push(
          `# ${name}-response: ${res.standIn ? `Conch's answer, which ${CLIENTS[client]} read` : "librdkafka 2.0.2's mock cluster answering it"}\n${head}${annotate(rframe, rfields, []).replace(/^.*\?\n/, "")}`,
        );
        entry.values[`${name}-response`] = value;
      }
    }
    if (!byApi.has(api.name)) byApi.set(api.name, []);
    byApi.get(api.name).push(entry);
  }
}

for (const [apiName, entries] of byApi) {
  const file = `test/kafka/fixtures/${kebab(apiName)}.ts`;
  const text = entries.flatMap((e) => e.blocks).join("\n\n");
  const values = Object.assign({}, ...entries.map((e) => e.values));
  const clients = [...new Set(entries.map((e) => `${CLIENTS[e.client]} v${e.version}`))].join(", ");
  writeFileSync(
    file,
    `/**
 * ${apiName} (api key ${entries[0].api.apiKey}) as real clients sent it: ${clients}.
 * Captured by scripts/kafka-capture/ against librdkafka's mock cluster. Responses are the mock's
 * where it answered, else Conch's own answer, which the client read and went on from. The hex is
 * the clients' and the mock's byte for byte; the comments name each primitive as Conch's decoder
 * (or, for responses, the fixture generator) read it. Generated by scripts/kafka-capture/fixtures.mjs.
 */
import type { FixtureValues } from "./fixture-format.js";

export const TEXT = \`
${text}
\`;

export const VALUES: FixtureValues = ${JSON.stringify(values, null, 2)};
`,
  );
  console.log(file, entries.length);
}
